import type { ReplyResult } from "../engine/types.ts";

/** What a reply did, in words a script's log can keep. */
export const DELIVERY_TEXT: Record<ReplyResult["delivery"], string> = {
	steer: "steered into the running agent (delivered)",
	followUp: "queued as a follow-up after the current turn (delivered)",
	answer: "answered the agent's question; it continues in the same process",
	"new-run": "started a new run on the same session",
	queued: "waits in the inbox of the queued run; delivered when it starts",
	pending: "left in the running agent's inbox; no receipt yet",
	budget: "raised the budget that paused it; it goes on in the same process",
	stopped: "stopped the row its budget had paused",
};
