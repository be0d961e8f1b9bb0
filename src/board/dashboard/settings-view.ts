/**
 * Board settings on pi-tui's SettingsList. Each setting is one entry of SETTINGS (label, values, how
 * it reads and writes the board's settings), so a new one (the concurrency limits, say) is one entry.
 */
import { type SettingItem, SettingsList } from "@earendil-works/pi-tui";
import { type BoardSettings, DEFAULT_SETTINGS } from "../view-model/prefs.ts";
import { fit } from "../view-model/ui-types.ts";
import { settingsTheme } from "./theme.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";

export interface SettingEntry {
	id: string;
	label: string;
	description?: string;
	values: readonly string[];
	read(settings: BoardSettings): string;
	write(settings: BoardSettings, value: string): BoardSettings;
}

const onOff = (key: keyof BoardSettings, label: string): SettingEntry => ({
	id: key,
	label,
	values: ["on", "off"],
	read: (settings) => (settings[key] ? "on" : "off"),
	write: (settings, value) => ({ ...settings, [key]: value === "on" }),
});

export const SETTINGS: readonly SettingEntry[] = [
	onOff("strip", "live strip below the editor (hidden while the board is open)"),
	onOff("notices", "pi notices when a row finishes or asks"),
	onOff("osNotify", "OS notifications (terminal OSC 777/99)"),
];

export class SettingsView extends View {
	private readonly list: SettingsList;

	constructor(host: Host, entries: readonly SettingEntry[] = SETTINGS) {
		super(host);
		const current = () => host.deps.settings ?? DEFAULT_SETTINGS;
		const items: SettingItem[] = entries.map((entry) => ({ id: entry.id, label: entry.label, description: entry.description, currentValue: entry.read(current()), values: [...entry.values] }));
		this.list = new SettingsList(
			items,
			8,
			settingsTheme(host.deps.theme),
			(id, value) => {
				const entry = entries.find((candidate) => candidate.id === id);
				if (!entry) return;
				const next = entry.write(current(), value);
				host.deps.settings = next;
				host.deps.saveSettings?.(next);
			},
			() => host.pop(this),
		);
		const theme = host.deps.theme;
		this.addChild(new Lines((width) => [fit(theme.fg("accent", theme.bold("Board settings")), width)]));
		this.addChild(this.list);
	}

	keyTable(): KeyEntry[] {
		const pass = (data: string) => this.list.handleInput(data);
		return [
			{ keys: ["up", "down"], help: "move", run: pass },
			{ keys: "confirm", help: "change", hint: "change", run: pass },
			{ keys: "cancel", help: "back", hint: "back", run: pass },
			{ keys: "help", help: "this help", hint: "help", run: () => this.host.help(this) },
		];
	}

	protected override otherInput(data: string): void {
		this.list.handleInput(data);
	}
}
