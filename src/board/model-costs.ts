/**
 * What pi knows of a model's price, for the dispatch check that a `$` budget can be reached. The
 * extension hands pi's model registry to the loader at each session start, which passes it here when the
 * board's code loads;
 * a process without pi (the web server) has none, and its dispatches are not checked for it.
 */
interface PricedModel {
	cost?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
}
export interface ModelRegistryView {
	find(provider: string, modelId: string): PricedModel | undefined;
}

let registry: ModelRegistryView | undefined;

export function useModelRegistry(next: ModelRegistryView | undefined): void {
	registry = next;
}

/** "priced", "unpriced" (pi knows it, without cost data), or "unknown" (no registry, or no such model). */
export function modelPrice(model: string): "priced" | "unpriced" | "unknown" {
	const slash = model.indexOf("/");
	if (!registry || slash <= 0) return "unknown";
	let found: PricedModel | undefined;
	try {
		found = registry.find(model.slice(0, slash), model.slice(slash + 1));
	} catch {
		return "unknown";
	}
	if (!found) return "unknown";
	const cost = found.cost ?? {};
	return [cost.input, cost.output, cost.cacheRead, cost.cacheWrite].some(
		(rate) => typeof rate === "number" && rate > 0,
	)
		? "priced"
		: "unpriced";
}
