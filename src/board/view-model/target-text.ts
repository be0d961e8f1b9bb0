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

/**
 * "ok", "drained (takes nothing new)", "unreachable since 14:03:07: ...", "failing its check at 14:05:10:
 * pi: not found", "failing: ..." (a run its link could not start). The last check's failure shows until a
 * check passes, whatever the link heard since: a member failing its check is never "ok".
 */
export function targetState(view: TargetView): string {
	const words: string[] = [];
	if (view.drained) words.push(`drained (takes nothing new${view.running > 0 ? `; ${view.running} finishing` : ""})`);
	if (view.unreachable)
		words.push(`unreachable since ${clock(view.unreachable.since)}: ${sanitizeText(view.unreachable.reason)}`);
	if (view.check && !view.check.ok)
		words.push(
			`failing its check at ${clock(view.check.at)}: ${sanitizeText(view.check.failing ?? "see targets check")}`,
		);
	else if (
		view.takes &&
		!view.takes.ok &&
		!["full", "drained"].includes(view.takes.why ?? "") &&
		!view.takes.why?.startsWith("unreachable")
	)
		words.push(sanitizeText(view.takes.why ?? ""));
	return words.length > 0 ? words.join("; ") : "ok";
}
