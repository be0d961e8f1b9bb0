/**
 * Test-only pi extension: turns the scripted model's first error into a transient one. After the
 * first assistant message that ends in error, it installs `<agentDir>/faux-script-after-error.json`
 * as the faux script, so pi's auto-retry of the same request gets the new answer.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { copyFileSync, renameSync } from "node:fs";
import { join } from "node:path";

export default function fauxTransientError(pi: ExtensionAPI): void {
	let switched = false;
	pi.on("message_end", (event) => {
		const message = event.message;
		if (switched || message.role !== "assistant" || message.stopReason !== "error") return;
		switched = true;
		const dir = process.env.PI_CODING_AGENT_DIR;
		if (!dir) throw new Error("faux transient error: PI_CODING_AGENT_DIR is not set");
		const tmp = join(dir, ".faux-script.json.tmp");
		copyFileSync(join(dir, "faux-script-after-error.json"), tmp);
		renameSync(tmp, join(dir, "faux-script.json"));
	});
}
