import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { boardLoader } from "./loader.ts";
import { registerBoardTools } from "./tools.ts";
import { registerBoardUi } from "./ui.ts";
import { isWorker } from "./worker-env.mjs";

/** Registers the board from light modules; its engine and dashboard load on first use (loader.ts). */
export async function registerBoard(pi: ExtensionAPI): Promise<void> {
	if (isWorker()) {
		// Workers answer to the board; they get ask_user, not the board itself (no recursive fan-out).
		(await import("./worker-role.ts")).registerWorkerRole(pi);
		return;
	}
	const load = boardLoader();
	registerBoardTools(pi, load);
	registerBoardUi(pi, load);
}
