/**
 * The dashboard's dialogs: text entry on pi-tui's Editor (reply is multi-line, with bracketed paste
 * and pi's submit/newline keys; filter and rename are one line), the y/n confirm, and the board
 * settings on pi-tui's SettingsList. A reply that cannot be delivered stays in the editor with the
 * reason.
 */
import { Editor, SettingsList } from "@earendil-works/pi-tui";
import type { ReplyResult } from "../types.ts";
import type { Dashboard } from "./dashboard.ts";
import { keyMatches } from "./key-table.ts";
import { type BoardSettings, DEFAULT_SETTINGS } from "../presence/notify.ts";
import { clean, editorTheme, message, settingsTheme } from "../view-model/ui-types.ts";

export interface Confirm {
	message: string;
	action: () => Promise<void>;
}

export interface DialogState {
	kind: "filter" | "reply" | "rename";
	editor: Editor;
	rowId?: string;
	followUp: boolean;
	/** A reply is out: keys wait until the service answers. */
	sending: boolean;
	/** Index of the question option last put in the editor with tab. */
	choice: number;
}

export function openText(d: Dashboard, kind: DialogState["kind"], value: string, options: { followUp?: boolean } = {}): void {
	d.back = d.mode === "peek" ? "peek" : "list";
	const editor = new Editor(d.deps.tui, editorTheme(d.deps.theme), { paddingX: 1 });
	if (value) editor.setText(value);
	editor.focused = d.focused;
	const state: DialogState = { kind, editor, rowId: d.focusRow()?.id, followUp: options.followUp === true, sending: false, choice: -1 };
	editor.onSubmit = (text) => submitted(d, state, text);
	d.dialog = state;
	d.mode = kind;
}

function close(d: Dashboard): void {
	d.dialog = undefined;
	d.mode = d.back;
}

export function handleTextDialog(d: Dashboard, data: string): void {
	const state = d.dialog;
	if (!state || state.sending) return;
	const keys = d.deps.keys;
	// Escape closes unless it is dismissing the editor's completion menu.
	if (keyMatches(keys, data, "cancel") && !state.editor.capturesViewportInput) {
		if (state.kind === "filter") {
			d.filter = "";
			d.rebuild();
		}
		close(d);
		return;
	}
	const row = state.rowId ? d.deps.feed.row(state.rowId) : undefined;
	const choices = state.kind === "reply" && row?.state === "needs_input" ? (row.questionOptions ?? []) : [];
	if (choices.length > 0 && keyMatches(keys, data, "tab")) {
		state.choice = (state.choice + 1) % choices.length;
		state.editor.setText(clean(choices[state.choice]));
		return;
	}
	state.editor.handleInput(data);
	if (state.kind === "filter" && d.dialog === state) {
		// Live filtering: the list narrows as the user types.
		d.filter = state.editor.getText().replace(/\s+/g, " ");
		d.rebuild();
	}
}

function submitted(d: Dashboard, state: DialogState, raw: string): void {
	const row = state.rowId ? d.deps.feed.row(state.rowId) : undefined;
	if (state.kind === "filter") {
		d.filter = raw.replace(/\s+/g, " ").trim();
		d.rebuild();
		close(d);
		return;
	}
	if (!row) {
		close(d);
		d.setStatus("that row is gone");
		return;
	}
	if (state.kind === "rename") {
		const name = raw.replace(/\s+/g, " ").trim();
		close(d);
		if (!name || name === row.name) d.setStatus("name unchanged");
		else void d.run(`renamed to ${name}`, row.id, () => d.deps.service.rename(row.id, name));
		return;
	}
	if (!raw.trim()) {
		d.setStatus("empty reply not sent");
		return;
	}
	state.sending = true;
	d.setStatus(`sending to ${row.name}…`);
	d.deps.service.reply(row.id, raw, state.followUp ? { followUp: true } : undefined).then(
		(result) => {
			if (d.dialog === state) close(d);
			d.deps.feed.put(result.row);
			d.setStatus(replyStatus(row.name, result));
		},
		(error: unknown) => {
			// Nothing typed is lost: the text goes back into the editor, with the reason on the status line.
			state.sending = false;
			state.editor.setText(raw);
			d.setStatus(`not sent: ${message(error)}`);
		},
	);
}

export function replyStatus(name: string, result: ReplyResult): string {
	const receipt = result.receipt;
	if (receipt?.status === "rejected") return `${name}: rejected: ${clean(receipt.reason ?? "no reason given")}`;
	switch (result.delivery) {
		case "steer":
			return `steered ${name}: delivered`;
		case "followUp":
			return `${name}: follow-up queued after the current turn`;
		case "answer":
			return `answered ${name}: the agent continues`;
		case "new-run":
			return `${name}: new run on the same session`;
		case "queued":
			return `${name}: queued until its run starts`;
		default:
			return `${name}: sent, waiting for the worker's receipt`;
	}
}

export function handleConfirm(d: Dashboard, data: string): void {
	const confirm = d.confirm;
	const keys = d.deps.keys;
	if (keyMatches(keys, data, "yes") || data === "Y" || keyMatches(keys, data, "confirm")) {
		d.mode = d.back;
		d.confirm = undefined;
		if (confirm) void confirm.action().catch((error: unknown) => d.setStatus(`failed: ${message(error)}`));
	} else if (keyMatches(keys, data, "no") || data === "N" || keyMatches(keys, data, "cancel")) {
		d.mode = d.back;
		d.confirm = undefined;
	}
}

const SETTING_LABELS: Record<keyof BoardSettings, string> = {
	strip: "live strip below the editor",
	notices: "pi notices when a row finishes or asks",
	osNotify: "OS notifications (terminal OSC 777/99)",
};

export function openSettings(d: Dashboard): void {
	d.back = d.mode === "peek" ? "peek" : "list";
	const current = d.deps.settings ?? DEFAULT_SETTINGS;
	const items = (Object.keys(SETTING_LABELS) as (keyof BoardSettings)[]).map((id) => ({ id, label: SETTING_LABELS[id], currentValue: current[id] ? "on" : "off", values: ["on", "off"] }));
	const list = new SettingsList(
		items,
		6,
		settingsTheme(d.deps.theme),
		(id, value) => {
			const next: BoardSettings = { ...(d.deps.settings ?? DEFAULT_SETTINGS), [id]: value === "on" };
			d.deps.settings = next;
			d.deps.saveSettings?.(next);
		},
		() => {
			d.settingsList = undefined;
			d.mode = d.back;
		},
	);
	d.settingsList = list;
	d.mode = "settings";
}

export function handleSettings(d: Dashboard, data: string): void {
	d.settingsList?.handleInput(data);
}
