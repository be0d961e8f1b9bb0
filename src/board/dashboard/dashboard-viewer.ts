/** Keys of the read-only viewers (transcript, diff): scrolling that follows the live end, help, back. */
import type { Dashboard } from "./dashboard.ts";
import { keyMatches } from "./key-table.ts";

export function handleViewer(d: Dashboard, data: string): void {
	const keys = d.deps.keys;
	const page = d.page();
	if (keyMatches(keys, data, "cancel") || keyMatches(keys, data, "quit")) {
		d.mode = d.back;
		d.attemptDiff = undefined;
	} else if (keyMatches(keys, data, "up")) d.viewer.scroll(-1);
	else if (keyMatches(keys, data, "down")) d.viewer.scroll(1);
	else if (keyMatches(keys, data, "pageUp")) d.viewer.scroll(-page);
	else if (keyMatches(keys, data, "pageDown")) d.viewer.scroll(page);
	else if (keyMatches(keys, data, "top")) d.viewer.top();
	else if (keyMatches(keys, data, "end")) d.viewer.end();
	else if (keyMatches(keys, data, "help")) {
		d.helpBack = d.mode;
		d.mode = "help";
	}
}
