/**
 * Test-only pi extension for the close-ritual tests: makes pi reject the first
 * agent_before_settle proposal of the process, by adding a context_edit for an entry that does
 * not exist. pi's validation then drops the whole proposal (the ritual and its continuation) and
 * reports an extension error. Later boundaries are left alone, so a ritual that retried would
 * get through and be seen by the model.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function ritualSabotage(pi: ExtensionAPI): void {
	let used = false;
	pi.on("agent_before_settle", (event) => {
		if (used) return undefined;
		used = true;
		return { entries: [...event.entries, { type: "context_edit", targetId: "no-such-entry", replacement: null }] };
	});
}
