/**
 * The board's code and store, loaded on first use: pi's start-up registers the tools' schemas and the
 * command from light modules, and nothing imports the engine or the dashboard, or reads the store,
 * until a tool runs, the command runs, or the session's deferred start (footer, strip) comes.
 */
import type { BoardRuntime } from "./runtime.ts";
import type { BoardService } from "./engine/types.ts";

export interface BoardLoader {
	runtime(): Promise<BoardRuntime>;
	/** The process's one board service (created on first use). */
	service(): Promise<BoardService>;
}

export function boardLoader(): BoardLoader {
	let runtime: Promise<BoardRuntime> | undefined;
	let service: Promise<BoardService> | undefined;
	const load = (): Promise<BoardRuntime> => (runtime ??= import("./runtime.ts"));
	return {
		runtime: load,
		service: () => (service ??= load().then((r) => r.createBoardService())),
	};
}
