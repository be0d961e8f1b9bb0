/**
 * The end of each turn, held for the runner when it asked (budgets): pi awaits `turn_end` handlers, so
 * the worker reports what this process has spent and waits for `go` before the next model request. A
 * run over its budget thus pauses between turns, never inside a tool, in the same process; the wait
 * parks like ask_user's after AGENT_BOARD_ASK_WAIT (the run ends, the row keeps its question). Also
 * the preset's extra system text, sent by the runner with the prompt.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { WorkerControl } from "./control-state.ts";

const PRESET_SECTION = "agent-board-preset";

/** Tokens and cost of one assistant message's usage (cost.total: the provider's billed cost where it gives one). */
function usageOf(message: unknown): { tokens: number; cost: number } {
	const m = message as { role?: unknown; usage?: { totalTokens?: unknown; cost?: { total?: unknown } } } | undefined;
	if (m?.role !== "assistant" || !m.usage) return { tokens: 0, cost: 0 };
	const tokens = typeof m.usage.totalTokens === "number" ? m.usage.totalTokens : 0;
	const cost = typeof m.usage.cost?.total === "number" ? m.usage.cost.total : 0;
	return { tokens, cost };
}

export function registerTurnHold(pi: ExtensionAPI, control: WorkerControl, waitMs: number): void {
	const spent = { tokens: 0, cost: 0 };
	pi.on("message_end", (event) => {
		const usage = usageOf(event.message);
		spent.tokens += usage.tokens;
		spent.cost += usage.cost;
	});
	pi.on("turn_end", async (event) => {
		const hold = control.holdTurn({ ...spent }, event.toolResults.length > 0);
		const timer = setTimeout(() => hold.park(), waitMs);
		try {
			await hold.outcome;
		} finally {
			clearTimeout(timer);
		}
		return undefined;
	});
	pi.on("before_agent_start", (event) => {
		const system = control.system;
		if (system) event.systemPromptOptions.sections[PRESET_SECTION] = system;
	});
}
