/**
 * The board's code and store, loaded on first use: pi's start-up registers the tools' schemas and the
 * command from light modules, and nothing imports the engine or the dashboard, or reads the store,
 * until a tool runs, the command runs, or the session's deferred start (footer, strip) comes.
 */
import type { BoardRuntime } from "./runtime.ts";
import type { BoardService } from "./engine/types.ts";
import type { ModelRegistryView } from "./model-costs.ts";

export interface BoardLoader {
	runtime(): Promise<BoardRuntime>;
	/** The process's one board service (created on first use). */
	service(): Promise<BoardService>;
	/** pi's model registry, for the `$` budget's dispatch check: kept here, handed over when the runtime loads. */
	useModelRegistry(registry: ModelRegistryView | undefined): void;
}

export function boardLoader(): BoardLoader {
	let runtime: Promise<BoardRuntime> | undefined;
	let service: Promise<BoardService> | undefined;
	let registry: ModelRegistryView | undefined;
	const handOver = () => import("./model-costs.ts").then((costs) => costs.useModelRegistry(registry));
	const load = (): Promise<BoardRuntime> => (runtime ??= handOver().then(() => import("./runtime.ts")));
	return {
		runtime: load,
		service: () => (service ??= load().then((r) => r.createBoardService())),
		useModelRegistry(next) {
			registry = next;
			// Loaded already: hand it over now (before, the first load does).
			if (runtime) void handOver();
		},
	};
}
