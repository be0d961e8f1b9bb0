/**
 * Board settings on pi-tui's SettingsList. Each setting is one entry of SETTINGS: its label, its
 * values, and how it reads and writes them through the board's deps, so a setting kept elsewhere (the
 * concurrency limits in the store's config, say) is one more entry.
 */
import { type SettingItem, SettingsList } from "@earendil-works/pi-tui";
import type { TargetView } from "../engine/types.ts";
import { targetLoad, targetState } from "../view-model/target-text.ts";
import { type BoardSettings, DEFAULT_SETTINGS } from "../view-model/prefs.ts";
import { clean } from "../view-model/row-text.ts";
import { fit, message } from "../view-model/ui-types.ts";
import type { BoardDeps } from "./deps.ts";
import { settingsTheme } from "./theme.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";

export interface SettingEntry {
	id: string;
	label: string;
	description?: string;
	values: readonly string[];
	read(deps: BoardDeps): string;
	/** Applies a new value; a failure is shown on the status line. `host` lets it open a view (the web login). */
	write(deps: BoardDeps, value: string, host?: Host): void | Promise<void>;
	/** An action, not a value: enter runs it (a form, a test, a question) with the settings to refresh after. */
	open?(host: Host, settings: SettingsView): void;
}

/** One of the board's on/off settings (saved with the prefs, applied outside the board at once). */
const onOff = (key: keyof BoardSettings, label: string): SettingEntry => ({
	id: key,
	label,
	values: ["on", "off"],
	read: (deps) => ((deps.settings ?? DEFAULT_SETTINGS)[key] ? "on" : "off"),
	write: (deps, value) => {
		const next: BoardSettings = { ...(deps.settings ?? DEFAULT_SETTINGS), [key]: value === "on" };
		deps.settings = next;
		deps.saveSettings?.(next);
	},
});

export const SETTINGS: readonly SettingEntry[] = [
	onOff("strip", "live strip below the editor (hidden while the board is open)"),
	onOff("notices", "pi notices when a row finishes or asks"),
	onOff("osNotify", "OS notifications (terminal OSC 777/99)"),
];

/** Limits offered when cycling: 1-16, and a larger one set elsewhere (`targets add --max`). */
function limitValues(current: number): string[] {
	const values = Array.from({ length: 16 }, (_, i) => i + 1);
	if (!values.includes(current)) values.push(current);
	return values.sort((a, b) => a - b).map(String);
}

/**
 * One concurrency limit per target (this machine first), kept in the store's config.json and changed
 * through the engine's one writer (targets.setLimit, under the config's lock); the queue reads it at its
 * next pump, so a higher limit starts queued runs at once.
 */
export function limitEntries(views: readonly TargetView[]): SettingEntry[] {
	return views.map((view) => {
		let current = view.max;
		return {
			id: `limit:${view.name}`,
			label: `${clean(view.name)}: runs at a time`,
			description: `${clean(view.where)}: ${view.running} running, ${view.queued} queued${view.load ? `, load ${targetLoad(view)}` : ""}${targetState(view) === "ok" ? "" : `, ${targetState(view)}`}; a higher limit starts queued runs at once`,
			values: limitValues(current),
			read: () => String(current),
			write: async (deps, value) => {
				await deps.service.targets.setLimit(view.name, Number(value));
				current = Number(value);
			},
		};
	});
}

export class SettingsView extends View {
	private list: SettingsList;
	private readonly entries: () => readonly SettingEntry[];

	/** `entries` is read again on refresh (a list that changes from here: the notifiers). */
	constructor(host: Host, entries: readonly SettingEntry[] | (() => readonly SettingEntry[]) = SETTINGS) {
		super(host);
		this.entries = typeof entries === "function" ? entries : () => entries;
		const theme = host.deps.theme;
		this.addChild(new Lines((width) => [fit(theme.fg("accent", theme.bold("Board settings")), width)]));
		this.list = this.makeList(this.entries());
		this.addChild(this.list);
	}

	/** Reads the entries again (one added or removed), the cursor staying on `select` when given. */
	refresh(select?: string): void {
		this.removeChild(this.list);
		this.list = this.makeList(this.entries());
		if (select) this.list.selectItem(select);
		this.addChild(this.list);
	}

	private makeList(entries: readonly SettingEntry[]): SettingsList {
		const host = this.host;
		const items: SettingItem[] = entries.map((entry) => ({
			id: entry.id,
			label: entry.label,
			description: entry.description,
			currentValue: entry.read(host.deps),
			values: [...entry.values],
		}));
		const list: SettingsList = new SettingsList(
			items,
			8,
			settingsTheme(host.deps.theme),
			(id, value) => {
				const entry = entries.find((candidate) => candidate.id === id);
				if (!entry) return;
				if (entry.open) {
					list.updateValue(id, entry.read(host.deps));
					entry.open(host, this);
					return;
				}
				Promise.resolve()
					.then(() => entry.write(host.deps, value, host))
					.catch((error: unknown) => {
						// Not applied: the list shows what holds.
						list.updateValue(id, entry.read(host.deps));
						host.setStatus(`${entry.label}: ${message(error)}`);
					});
			},
			() => host.pop(this),
		);
		return list;
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
