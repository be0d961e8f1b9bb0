/**
 * Pure reading of a session's context the way pi 1.6's print mode reads it: after the last prompt,
 * `pi -p` looks only at the last context message. An assistant message that ended in error or was
 * aborted is printed to stderr with exit 1, one cut off by the token limit ("length") prints its
 * text and exits 1, any other assistant message prints its text blocks and exits 0.
 */

/** The fields of an agent message this module needs; pi's AgentMessage union fits it. */
export interface MessageLike {
	role: string;
	customType?: string;
	stopReason?: string;
	errorMessage?: string;
}

const FAILED_STOP_REASONS = new Set(["error", "aborted", "length"]);

/** True when print mode would exit 0 with the last message's answer: only then is a ritual due. */
export function taskCompleted(messages: readonly MessageLike[]): boolean {
	const last = messages.at(-1);
	return last?.role === "assistant" && !FAILED_STOP_REASONS.has(last.stopReason ?? "");
}

export type RitualResult = { ok: true; notes: string[] } | { ok: false; reason: string };

/** The messages from the last custom message of `customType` on: the ritual prompt and its turn. */
export function messagesFrom(messages: readonly MessageLike[], customType: string): MessageLike[] {
	for (let i = messages.length - 1; i >= 0; i--) {
		const message = messages[i];
		if (message?.role === "custom" && message.customType === customType) return messages.slice(i);
	}
	return [];
}

/**
 * Judges the ritual turn from the messages it added to the context and the note files that
 * appeared in `.tasks/handoffs/` while it ran.
 */
export function judgeRitual(added: readonly MessageLike[], newNotes: readonly string[]): RitualResult {
	const last = [...added].reverse().find((message) => message.role === "assistant");
	if (!last) return { ok: false, reason: "the ritual turn did not run (no model reply)" };
	if (last.stopReason === "error" || last.stopReason === "aborted") {
		return {
			ok: false,
			reason: last.errorMessage || `the model request ${last.stopReason === "error" ? "failed" : "was aborted"}`,
		};
	}
	if (newNotes.length === 0) return { ok: false, reason: "no new note appeared in .tasks/handoffs/" };
	return { ok: true, notes: [...newNotes] };
}
