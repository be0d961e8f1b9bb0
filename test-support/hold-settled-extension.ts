/**
 * Test-only extension: keeps a settled pi from exiting until the file named by
 * PAB_HOLD_SETTLED_FILE exists, so a test can talk to a worker that has sent `closed` without racing
 * its exit.
 */
import { existsSync } from "node:fs";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function holdSettled(pi: ExtensionAPI): void {
	const file = process.env.PAB_HOLD_SETTLED_FILE;
	if (!file) return;
	pi.on("agent_settled", async () => {
		while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 25));
	});
}
