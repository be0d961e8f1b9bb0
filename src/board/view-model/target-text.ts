/**
 * A target in words, for `targets` and S alike: the far side's load at its last frame, and its state
 * (its rows' link unreachable, or why a pool would place nothing there now). Pure.
 */
import { sanitizeText } from "../engine/sanitize.ts";
import type { TargetView } from "../engine/types.ts";

const clock = (ms: number) => new Date(ms).toTimeString().slice(0, 8);

/** "0.52/2" (1-minute load / cores), or "-" when the far side never said. */
export function targetLoad(view: TargetView): string {
	return view.load ? `${view.load.load.toFixed(2)}/${view.load.cpus}` : "-";
}

/** "ok", "unreachable since 14:03:07: ...", "failing its check: ...". */
export function targetState(view: TargetView): string {
	if (view.unreachable)
		return `unreachable since ${clock(view.unreachable.since)}: ${sanitizeText(view.unreachable.reason)}`;
	if (view.takes && !view.takes.ok && view.takes.why !== "full") return sanitizeText(view.takes.why ?? "");
	return "ok";
}
