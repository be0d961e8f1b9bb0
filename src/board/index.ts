import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { isWorker } from "./worker-env.ts";

/**
 * Registers the board from light modules; its engine and dashboard load on first use (loader.ts). A
 * worker loads only its role: not the tools, the command or their words.
 */
export async function registerBoard(pi: ExtensionAPI): Promise<void> {
	if (isWorker()) {
		// Workers answer to the board; they get ask_user, not the board itself (no recursive fan-out).
		(await import("./worker-role.ts")).registerWorkerRole(pi);
		return;
	}
	const [{ boardLoader }, { registerBoardTools }, { registerBoardUi }] = await Promise.all([
		import("./loader.ts"),
		import("./tools.ts"),
		import("./ui.ts"),
	]);
	const load = boardLoader();
	registerBoardTools(pi, load);
	registerBoardUi(pi, load);
}
