// The closed word lists of the store and the control channel, each defined once. The runner uses
// them as they are; src/board/engine/schemas.ts builds the store files' shapes from the same arrays, and
// the TypeScript types come from those shapes (typebox Static), so no list is written twice.

/** A run's state (status.json /state), and so its row's. */
export const RUN_STATES = /** @type {const} */ ([
	"queued",
	"working",
	"needs_input",
	"completed",
	"idle",
	"failed",
	"stopped",
	"error",
]);

/** pi's --thinking levels. */
export const THINKING_LEVELS = /** @type {const} */ (["off", "minimal", "low", "medium", "high", "xhigh"]);

/** Where a row runs: its cwd, a worktree when another writer is active in the repo, or always a worktree. */
export const WORKTREE_MODES = /** @type {const} */ (["none", "auto", "worktree"]);

/** How a message reached a running worker (receipt /as). */
export const DELIVERY_KINDS = /** @type {const} */ (["steer", "followUp", "answer"]);

/** How a message to a running worker is meant: into the current turn, or after it. */
export const DELIVER_AS = /** @type {const} */ (["steer", "followUp"]);

/** The runner's answer to one inbox message. */
export const RECEIPT_STATUSES = /** @type {const} */ (["delivered", "rejected"]);

/** Where a needs-input question came from: the ask_user tool, the trailing-question fallback, or a budget that paused the run. */
export const QUESTION_SOURCES = /** @type {const} */ (["tool", "heuristic", "budget"]);

/** Attempts one dispatch may start (an attempt set). */
export const MAX_ATTEMPTS = 8;
/** A burst on a target or pool with a larger limit goes up to that limit, never above this. */
export const MAX_BURST = 64;

/** The target every board has: this machine, the queue's own slots. */
export const LOCAL_TARGET = "local";

/** A target's name: a path component and a word in the filter (`on:<name>`). */
export const TARGET_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
