// Pure state rules for one run, shared by the runner (writes status) and the extension (reads and
// reconciles). No I/O here so both sides derive states the same way.
import { RUN_STATES } from "./vocabulary.mjs";
import {
	clip,
	describeTool,
	firstErrorLine,
	firstSentence,
	flatWindow,
	lastSentence,
	looksLikeQuestion,
	messageText,
	obj,
	tail,
} from "./text-rules.mjs";

export { describeTool, firstSentence, looksLikeQuestion };

// The shapes live once, as the store's checked schemas (src/board/engine/schemas.ts); these names point at
// the types derived from them. Type-only: the runner imports nothing but node:* and .mjs at run time.
/** @typedef {import("../../src/board/engine/types.ts").RowState} RunState */
/** @typedef {import("../../src/board/engine/types.ts").RunStatus} RunStatus */
/** @typedef {import("../../src/board/engine/types.ts").LiveView} LiveView */
/** @typedef {import("../../src/board/engine/types.ts").Receipt} Receipt */

/** Every state but queued and working (a needs_input run may still wait in place: see runEnded). */
export const TERMINAL_STATES = RUN_STATES.filter((state) => state !== "queued" && state !== "working");
export const RECENT_EVENTS = 12;
const PREVIEW_CHARS = 400;
/** Bounded tail of the assistant text being streamed, kept in the status for live views. */
export const LIVE_TEXT_CHARS = 600;
export const RECEIPTS_KEPT = 5;

/** @param {string} state */
export function isTerminal(state) {
	return TERMINAL_STATES.some((terminal) => terminal === state);
}

/** The run is over (a needs_input run may still be live, waiting in place for its answer). @param {RunStatus} status */
export function runEnded(status) {
	return typeof status.endedAt === "number";
}

/** Everything a reader can see, without the counters that change on every event. @param {RunStatus} status */
export function visibleKey(status) {
	const { updatedAt: _u, eventCount: _e, ...visible } = status;
	return JSON.stringify(visible);
}

/** @param {string} runId @param {string} rowId @param {number} now @returns {RunStatus} */
export function initialStatus(runId, rowId, now) {
	/** @type {RunStatus} */
	const status = {
		version: 1,
		runId,
		rowId,
		state: "queued",
		createdAt: now,
		updatedAt: now,
		lastActivityAt: now,
		settled: false,
		usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 },
		eventCount: 0,
		recentEvents: [],
		summary: "",
	};
	status.summary = summarize(status);
	return status;
}

/**
 * Summary priority (seed 003 section 6): model summary, active tool, question, first sentence of
 * the latest assistant text, error, then a plain status line.
 * @param {RunStatus} status
 */
export function summarize(status) {
	if (status.modelSummary) return status.modelSummary;
	// Until its owner ends it (a target's stop waits for the target): the row says so.
	if (status.stopRequested && !runEnded(status)) return "Stop requested";
	const live = status.live;
	if (live && !runEnded(status)) {
		if (status.question && status.state === "needs_input") return firstSentence(status.question);
		if (live.retry) return clip(`Retrying ${live.retry.attempt}/${live.retry.max}: ${live.retry.reason}`, 160);
		if (live.compactingSince) return "Compacting context";
		if (live.tool) return `Running ${live.tool.detail}`;
		if (live.text) return lastSentence(live.text);
		if (live.waitingSince) return "Waiting for the model";
	}
	if (status.currentTool && !runEnded(status)) return `Running ${status.currentTool}`;
	if (status.question && status.state === "needs_input") return firstSentence(status.question);
	if (status.state === "failed" && status.error) return `Failed: ${firstSentence(status.error)}`;
	if (status.latestAssistant) return firstSentence(status.latestAssistant);
	if (status.error) return firstSentence(status.error);
	/** @type {Record<RunState, string>} */
	const fallback = {
		queued: "Waiting for a free slot",
		working: "Working",
		needs_input: "Waiting for input",
		completed: "Completed",
		idle: "Finished without output",
		failed: "Failed",
		stopped: "Stopped",
		error: "Error",
	};
	return fallback[status.state];
}

/** One line of the row's recent events (bounded). @param {RunStatus} status @param {number} at @param {string} text */
export function pushEvent(status, at, text) {
	status.recentEvents.push({ at, text: clip(flatWindow(text, "start"), 200) });
	if (status.recentEvents.length > RECENT_EVENTS)
		status.recentEvents.splice(0, status.recentEvents.length - RECENT_EVENTS);
}

/** @param {RunStatus} status @returns {LiveView} */
function live(status) {
	status.live ??= {};
	return status.live;
}

/** @param {RunStatus} status @param {Record<string, unknown>} message @param {number} now */
function applyAssistantEnd(status, message, now) {
	const text = messageText(message).trim();
	if (text) {
		status.latestAssistant = clip(text, PREVIEW_CHARS);
		pushEvent(status, now, `assistant: ${text}`);
	}
	if (typeof message.provider === "string" && typeof message.model === "string")
		status.model = `${message.provider}/${message.model}`;
	status.lastStopReason = typeof message.stopReason === "string" ? message.stopReason : undefined;
	if (message.stopReason === "error" || typeof message.errorMessage === "string") {
		const error = typeof message.errorMessage === "string" ? message.errorMessage : "model error";
		status.error = error;
		pushEvent(status, now, `error: ${error}`);
	} else if (message.stopReason === "stop" || message.stopReason === "toolUse") {
		status.error = undefined;
	}
	const usage = obj(message.usage);
	for (const key of /** @type {const} */ (["input", "output", "cacheRead", "cacheWrite", "totalTokens"])) {
		if (typeof usage[key] === "number") status.usage[key] += /** @type {number} */ (usage[key]);
	}
	const cost = obj(usage.cost).total;
	if (typeof cost === "number") status.usage.cost += cost;
	if (status.live) status.live.text = undefined;
	status.lastActivityAt = now;
}

/** @param {RunStatus} status @param {Record<string, unknown>} event @param {number} now */
function applyToolStart(status, event, now) {
	const name = typeof event.toolName === "string" ? event.toolName : "tool";
	status.currentTool = describeTool(name, event.args);
	live(status).tool = { name, detail: status.currentTool, startedAt: now };
	pushEvent(status, now, `tool ${status.currentTool}`);
	if (name === "ask_user") {
		const args = obj(event.args);
		if (typeof args.question === "string") {
			// The worker waits in place for the answer: needs_input while the run is still live.
			status.state = "needs_input";
			status.question = args.question;
			status.questionSource = "tool";
			status.questionOptions = Array.isArray(args.options)
				? args.options.filter((o) => typeof o === "string")
				: undefined;
			pushEvent(status, now, "needs_input");
		}
	}
	status.lastActivityAt = now;
}

/** @param {RunStatus} status @param {Record<string, unknown>} event @param {number} now */
function applyToolEnd(status, event, now) {
	status.currentTool = undefined;
	if (status.live) status.live.tool = undefined;
	if (event.isError === true) pushEvent(status, now, `tool ${String(event.toolName)} failed`);
	if (event.toolName !== "ask_user") return;
	const details = obj(obj(event.result).details);
	if (details.parked === true) {
		status.parked = true;
		return;
	}
	// Answered (or aborted) in place: the agent carries on.
	if (status.state === "needs_input") status.state = "working";
	if (details.answered === true && typeof details.answer === "string")
		pushEvent(status, now, `answered: ${details.answer}`);
	status.question = undefined;
	status.questionOptions = undefined;
	status.questionSource = undefined;
	status.lastActivityAt = now;
}

/**
 * Folds one worker JSON event into the status (mutates and returns it).
 * @param {RunStatus} status @param {Record<string, unknown>} event @param {number} now
 */
export function applyEvent(status, event, now) {
	status.eventCount += 1;
	status.updatedAt = now;
	const type = event.type;
	if (status.state === "queued" && type !== "session") {
		status.state = "working";
		status.startedAt ??= now;
		status.lastActivityAt = now;
	}
	switch (type) {
		case "turn_start":
			live(status).waitingSince = now;
			break;
		case "message_start":
			if (obj(event.message).role === "assistant") live(status).text = undefined;
			break;
		case "message_update": {
			const view = live(status);
			view.waitingSince = undefined;
			view.retry = undefined;
			const update = obj(event.assistantMessageEvent);
			if (update.type === "text_delta" && typeof update.delta === "string")
				view.text = tail(`${view.text ?? ""}${update.delta}`, LIVE_TEXT_CHARS);
			break;
		}
		case "message_end": {
			const message = obj(event.message);
			if (message.role === "assistant") {
				if (status.live) status.live.waitingSince = undefined;
				applyAssistantEnd(status, message, now);
			} else if (message.role === "user") {
				const text = messageText(message).trim();
				if (text) pushEvent(status, now, `user: ${text}`);
			}
			break;
		}
		case "tool_execution_start":
			applyToolStart(status, event, now);
			break;
		case "tool_execution_end":
			applyToolEnd(status, event, now);
			break;
		case "auto_retry_start": {
			const reason = typeof event.errorMessage === "string" ? event.errorMessage : "error";
			const attempt = typeof event.attempt === "number" ? event.attempt : 1;
			const max = typeof event.maxAttempts === "number" ? event.maxAttempts : attempt;
			live(status).retry = { attempt, max, reason: clip(reason, 200), at: now };
			pushEvent(status, now, `retrying ${attempt}/${max}: ${reason}`);
			break;
		}
		case "auto_retry_end":
			if (status.live) status.live.retry = undefined;
			if (event.success === false) {
				status.error = typeof event.finalError === "string" ? event.finalError : "automatic retries failed";
				status.retryFailed = true;
			}
			break;
		case "compaction_start":
			live(status).compactingSince = now;
			pushEvent(status, now, "compacting");
			break;
		case "compaction_end":
			if (status.live) status.live.compactingSince = undefined;
			break;
		case "agent_settled":
			status.settled = true;
			break;
	}
	status.summary = summarize(status);
	return status;
}

/** Records the runner's answer to one inbox message (bounded list for the board). @param {RunStatus} status @param {Receipt} receipt */
export function addReceipt(status, receipt) {
	status.receipts = [...(status.receipts ?? []), receipt].slice(-RECEIPTS_KEPT);
	const what =
		receipt.status === "delivered"
			? `${receipt.as ?? "message"} delivered`
			: `message rejected (${receipt.reason ?? "no reason"})`;
	pushEvent(status, receipt.at, `${what}: ${receipt.preview}`);
	status.summary = summarize(status);
}

/**
 * Terminal state once the worker has exited.
 * @param {RunStatus} status
 * @param {{ code: number | null, signal: string | null, spawnError?: string, stopped?: boolean, now: number, stderrHead?: string }} exit
 *   `stderrHead`: the start of the worker's stderr (the status keeps only its tail), where its error is
 */
export function finalize(status, exit) {
	status.exitCode = exit.code;
	status.exitSignal = exit.signal;
	status.endedAt = exit.now;
	status.updatedAt = exit.now;
	status.lastActivityAt = exit.now;
	status.currentTool = undefined;
	status.live = undefined;
	status.turnHold = undefined;
	if (exit.stopped) {
		status.state = "stopped";
	} else if (exit.spawnError) {
		status.state = "failed";
		status.error = exit.spawnError;
	} else if (exit.signal) {
		status.state = "failed";
		status.error = `worker killed by ${exit.signal}`;
	} else if (exit.code !== 0) {
		status.state = "failed";
		const said = firstErrorLine(exit.stderrHead ?? status.stderrTail ?? "");
		status.error = `worker exited with code ${exit.code}${said ? `: ${said}` : ""}`;
	} else if (!status.settled) {
		status.state = "failed";
		status.error = status.error ?? "worker exited before the run settled";
	} else if (status.lastStopReason === "error" || status.retryFailed) {
		status.state = "failed";
		status.error = status.error ?? "model error";
	} else if (status.question && (status.questionSource === "tool" || status.questionSource === "budget")) {
		// ask_user or a budget pause parked (or its run ended while waiting): the answer resumes the session.
		status.state = "needs_input";
	} else if (status.lastStopReason === "aborted") {
		status.state = "stopped";
	} else if (status.latestAssistant && looksLikeQuestion(status.latestAssistant)) {
		status.state = "needs_input";
		status.question = status.latestAssistant;
		status.questionSource = "heuristic";
	} else if (status.latestAssistant) {
		status.state = "completed";
	} else {
		status.state = "idle";
	}
	pushEvent(
		status,
		exit.now,
		`${status.state}${status.error && status.state === "failed" ? `: ${status.error}` : ""}`,
	);
	status.summary = summarize(status);
	return status;
}

/**
 * How a run ends when its owner cannot record it (run-end.mjs builds these): its state, a code for
 * programs (reasons.mjs), the reason for people, and the answer to each message still waiting.
 * @typedef {object} RunEnd
 * @property {"failed" | "stopped"} state
 * @property {import("./reasons.mjs").ReasonCode} code
 * @property {string} reason
 * @property {{ code: import("./reasons.mjs").ReceiptCode, detail?: string }} messages
 */

/**
 * Ends a run from outside (mutates and returns the status): its state, `errorCode`, the reason (a
 * failed run's `error`; a stopped run keeps none, it reads "Stopped"), the event line, the summary.
 * @param {RunStatus} status @param {RunEnd} end @param {number} now
 */
export function endFromOutside(status, end, now) {
	status.state = end.state;
	status.endedAt = now;
	status.updatedAt = now;
	status.lastActivityAt = now;
	status.currentTool = undefined;
	status.live = undefined;
	status.errorCode = end.code;
	if (end.state === "failed") status.error = end.reason;
	else status.stopRequested = true;
	pushEvent(status, now, end.state === "failed" ? `failed: ${end.reason}` : "stopped");
	status.summary = summarize(status);
	return status;
}

/** Required fields of a status and their kinds (src/board/engine/schemas.ts StatusSchema is the full shape). */
const REQUIRED = /** @type {const} */ ({
	version: "number",
	runId: "string",
	rowId: "string",
	createdAt: "number",
	updatedAt: "number",
	lastActivityAt: "number",
	settled: "boolean",
	eventCount: "number",
	summary: "string",
	usage: "object",
	recentEvents: "array",
});
const OPTIONAL = /** @type {const} */ ({
	startedAt: "number",
	endedAt: "number",
	currentTool: "string",
	latestAssistant: "string",
	lastStopReason: "string",
	question: "string",
	error: "string",
	stderrTail: "string",
	modelSummary: "string",
	model: "string",
	live: "object",
	receipts: "array",
	questionOptions: "array",
	stopRequested: "boolean",
	retryFailed: "boolean",
	parked: "boolean",
	turnHold: "object",
});

/** @param {unknown} value @param {string} kind */
export function isKind(value, kind) {
	if (kind === "array") return Array.isArray(value);
	if (kind === "object") return value !== null && typeof value === "object" && !Array.isArray(value);
	return typeof value === kind && (kind !== "number" || Number.isFinite(value));
}

/**
 * Why a status read from a file (a target's, or one about to be ended from outside) cannot be used by
 * the rules here, or undefined: its fields' kinds, its state, and that it names `run`.
 * @param {unknown} value @param {{ runId: string, rowId: string }} run
 */
export function statusError(value, run) {
	if (!isKind(value, "object")) return "/ must be object";
	const s = /** @type {Record<string, unknown>} */ (value);
	for (const [field, kind] of Object.entries(REQUIRED))
		if (!isKind(s[field], kind)) return `/${field} must be ${kind}`;
	for (const [field, kind] of Object.entries(OPTIONAL))
		if (s[field] !== undefined && !isKind(s[field], kind)) return `/${field} must be ${kind}`;
	if (!RUN_STATES.some((state) => state === s.state)) return "/state is not a run state";
	if (s.runId !== run.runId || s.rowId !== run.rowId)
		return `names run ${String(s.runId)} of row ${String(s.rowId)}, not ${run.runId} of ${run.rowId}`;
	return undefined;
}
