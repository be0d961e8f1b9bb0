/** Untrusted text (row names, worker output, file names) made safe to print: no escape or control sequences reach the terminal. */

// CSI/OSC/other ESC sequences first (so their parameters go too), then any lone C0/C1 control.
const ESCAPES = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])?|\x9b[0-?]*[ -/]*[@-~]/g;
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** One line: escapes removed, controls and line breaks become spaces. */
export function plain(text: string): string {
	return text.replace(ESCAPES, "").replace(/[\n\t]/g, " ").replace(CONTROLS, " ");
}

/** Multi-line text (a diff): escapes removed, tabs and newlines kept, other controls shown as "?". */
export function plainLines(text: string): string {
	return text.replace(ESCAPES, "").replace(CONTROLS, "?");
}
