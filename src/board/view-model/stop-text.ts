/** The `stop` subcommand's words for what a stop did (engine/run-control.ts stopOutcome). Pure. */
import type { StopResult } from "../engine/types.ts";
import { clean, unreachableText } from "./row-text.ts";

/** "stopped", "already ended (failed)", "stop requested (the row is on box1, unreachable since 14:03: ...)". */
export function stopText(result: StopResult): string {
	const { row } = result;
	if (result.outcome === "ended") return `already ended (${row.state})`;
	if (result.outcome === "stopped") return "stopped";
	if (!row.target) return "stop requested (its runner has not recorded the end yet)";
	const why = row.unreachable ? unreachableText(row) : "its link delivers the stop when it can";
	return `stop requested (the row is on ${clean(row.target)}, ${why})`;
}
