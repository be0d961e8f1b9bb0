/**
 * The store's notifiers in the board's settings (`S`), as `/agent-board notify` has them: each listed
 * (name, format, the URL masked, its events), enter on it sends a test; one entry removes it (asked
 * first), one adds a notifier through a small form. What each does is runner/notify/notify-actions.mjs,
 * which the subcommand calls too. A URL typed in is shown masked once it is entered, never whole.
 */
import { SettingsList, type SettingItem } from "@earendil-works/pi-tui";
import { addNotifierFrom, removeNotifierNamed, testNotifier } from "../../../runner/notify/notify-actions.mjs";
import { DEFAULT_EVENTS, EVENTS, FORMATS, maskUrl, readNotifiers } from "../../../runner/notify/notifiers.mjs";
import { clean } from "../view-model/row-text.ts";
import { fit, message } from "../view-model/ui-types.ts";
import { ConfirmView } from "./confirm-view.ts";
import { TextSubmenu } from "./dispatch-options.ts";
import type { SettingEntry, SettingsView } from "./settings-view.ts";
import { settingsTheme } from "./theme.ts";
import { wrap } from "./text.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";

const ENTER = "enter";

function notifiersOf(storeDir: string): ReturnType<typeof readNotifiers> {
	try {
		return readNotifiers(storeDir);
	} catch {
		return [];
	}
}

export function notifyEntries(storeDir: string): SettingEntry[] {
	const action = (id: string, label: string, description: string, value: string, open: SettingEntry["open"]) => ({
		id,
		label,
		description,
		values: [value],
		read: () => value,
		write: () => undefined,
		open,
	});
	const each = notifiersOf(storeDir).flatMap((n): SettingEntry[] => {
		const name = clean(n.name);
		return [
			action(
				`notify:${n.name}`,
				`notifier ${name}`,
				`on ${n.on.join(",")}; enter sends a test message now`,
				`${n.format} to ${maskUrl(n.url)} on ${n.on.join(",")}`,
				(host) => {
					host.setStatus(`sending a test to ${name}…`);
					testNotifier(storeDir, n.name, Date.now()).then(
						(answer: string) => host.setStatus(answer),
						(error: unknown) => host.setStatus(message(error)),
					);
				},
			),
			action(`notify-remove:${n.name}`, `notifier ${name}: remove`, "asks first", "remove", (host, settings) =>
				host.push(
					new ConfirmView(host, `Remove the notifier ${name}?`, async () => {
						await removeNotifierNamed(storeDir, n.name);
						settings.refresh("notify:add");
						host.setStatus(`notifier ${name} removed`);
					}),
				),
			),
		];
	});
	return [
		...each,
		action(
			"notify:add",
			"notifiers: add one",
			"where a row's events go (ntfy, Slack, Discord or JSON); /agent-board notify does the same",
			ENTER,
			(host, settings) => host.push(new NotifyAddView(host, storeDir, settings)),
		),
	];
}

/** The add form: name, URL (masked once entered), format, events, and "add". */
export class NotifyAddView extends View {
	private readonly list: SettingsList;
	private readonly storeDir: string;
	private readonly settings: SettingsView;
	private readonly input = { name: "", url: "", format: "json", on: DEFAULT_EVENTS.join(",") };
	/** A text field being typed: every key goes to it. */
	private editing = false;

	constructor(host: Host, storeDir: string, settings: SettingsView) {
		super(host);
		this.storeDir = storeDir;
		this.settings = settings;
		const text = (hidden: boolean) => (current: string, done: (value?: string) => void) => {
			this.editing = true;
			// The URL starts empty each time: its whole text is never put back on the screen.
			return new TextSubmenu(host, hidden ? "" : current, (value) => {
				this.editing = false;
				done(value === undefined ? undefined : hidden ? this.setUrl(value) : value);
			});
		};
		const items: SettingItem[] = [
			{ id: "name", label: "name", currentValue: "", submenu: text(false) },
			{ id: "url", label: "URL", currentValue: "", submenu: text(true), description: "shown masked once entered" },
			{ id: "format", label: "format", currentValue: this.input.format, values: [...FORMATS] },
			{
				id: "on",
				label: "events",
				currentValue: this.input.on,
				submenu: text(false),
				description: `comma-separated, some of ${EVENTS.join(",")}`,
			},
			{ id: "add", label: "add", currentValue: ENTER, values: [ENTER], description: "save this notifier" },
		];
		this.list = new SettingsList(
			items,
			8,
			settingsTheme(host.deps.theme),
			(id, value) => this.changed(id, value),
			() => host.pop(this),
		);
		const theme = host.deps.theme;
		this.addChild(
			new Lines((width) => [
				fit(theme.fg("accent", theme.bold("Add a notifier")), width),
				...wrap("enter on a field to type it, then enter; escape leaves", width).map((line) =>
					theme.fg("muted", line),
				),
			]),
		);
		this.addChild(this.list);
	}

	/** Keeps the URL typed and returns what the form shows of it. */
	private setUrl(url: string): string {
		this.input.url = url;
		return url ? maskUrl(url) : "";
	}

	private changed(id: string, value: string): void {
		if (id === "name" || id === "format" || id === "on") this.input[id] = value;
		if (id !== "add") return;
		const input = this.input;
		addNotifierFrom(this.storeDir, input, Date.now()).then(
			(n: { name: string; format: string; url: string; on: string[] }) => {
				this.host.pop(this);
				this.settings.refresh(`notify:${n.name}`);
				this.host.setStatus(`notifier ${n.name} added: ${n.format} to ${maskUrl(n.url)} on ${n.on.join(",")}`);
			},
			(error: unknown) => this.host.setStatus(message(error)),
		);
	}

	keyTable(): KeyEntry[] {
		const pass = (data: string) => this.list.handleInput(data);
		return [
			{ keys: ["up", "down"], help: "move", run: pass },
			{ keys: "confirm", help: "type a field, change the format, or add", hint: "change", run: pass },
			{ keys: "cancel", help: "back to the settings", hint: "back", keep: true, run: pass },
			{ keys: "help", help: "this help", hint: "help", run: () => this.host.help(this) },
		];
	}

	override takesText(): boolean {
		return this.editing;
	}

	override handleInput(data: string): void {
		if (this.editing) {
			this.list.handleInput(data);
			return;
		}
		super.handleInput(data);
	}

	protected override otherInput(data: string): void {
		this.list.handleInput(data);
	}
}
