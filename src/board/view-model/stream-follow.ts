/**
 * A streaming reply as the console follows it. A run's status carries only the newest
 * LIVE_TEXT_CHARS of the text being streamed; the console joins each tail it sees to what it saw
 * before at their overlap, so a long reply reads whole from where the console first saw it. Text
 * that streamed past unseen between two tails is marked with "…"; a tail that is a whole message of
 * its own (shorter than the cap, no overlap) starts a new one. Pure: text in, text out.
 */
import { LIVE_TEXT_CHARS } from "../../../runner/life/state-rules.mjs";

/** What the console keeps of one streaming message at most (its start goes first). */
export const FOLLOW_CHARS = 64 * 1024;
/** The shortest overlap that counts as the same text (a shorter one may be chance). */
const MIN_OVERLAP = 24;

function capped(text: string): string {
	return text.length > FOLLOW_CHARS ? text.slice(-FOLLOW_CHARS) : text;
}

export function followStream(seen: string, tail: string): string {
	if (!tail) return "";
	if (!seen || tail.startsWith(seen)) return tail;
	if (seen.endsWith(tail)) return seen;
	// The longest end of `seen` that `tail` starts with: searched from a probe of the tail's start.
	const probe = tail.slice(0, MIN_OVERLAP);
	for (
		let at = seen.lastIndexOf(probe);
		at >= 0 && at >= seen.length - tail.length;
		at = at > 0 ? seen.lastIndexOf(probe, at - 1) : -1
	) {
		if (tail.startsWith(seen.slice(at))) return capped(seen.slice(0, at) + tail);
	}
	// No overlap: a tail under the cap is a whole (new) message; at the cap, text went by unseen.
	if (tail.length < LIVE_TEXT_CHARS) return tail;
	return capped(`${seen} … ${tail}`);
}
