import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { autoGc } from "./gc.ts";
import { createBoardService } from "./service.ts";
import { registerBoardTools } from "./tools.ts";
import type { BoardService } from "./types.ts";
import { registerBoardUi } from "./ui.ts";
import { isWorker, registerWorkerRole } from "./worker-role.ts";

export function registerBoard(pi: ExtensionAPI): void {
	if (isWorker()) {
		// Workers answer to the board; they get ask_user, not the board itself (no recursive fan-out).
		registerWorkerRole(pi);
		return;
	}
	let service: BoardService | undefined;
	const getService = (): BoardService => (service ??= createBoardService());
	registerBoardTools(pi, getService);
	registerBoardUi(pi, getService);
	// Retention runs at most once a day per store, after startup, and never in the way of the session.
	pi.on("session_start", () => {
		setTimeout(() => autoGc(getService().storeDir), 5000).unref();
	});
}
