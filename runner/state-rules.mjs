// Pure state rules for one run, shared by the runner (writes status) and the extension (reads and
// reconciles). No I/O here so both sides derive states the same way.

/** @typedef {"queued"|"working"|"needs_input"|"completed"|"idle"|"failed"|"stopped"|"error"} RunState */

/**
 * @typedef {object} RunUsage
 * @property {number} input
 * @property {number} output
 * @property {number} cacheRead
 * @property {number} cacheWrite
 * @property {number} totalTokens
 * @property {number} cost
 */

/**
 * @typedef {object} RunEvent
 * @property {number} at
 * @property {string} text
 */

/**
 * @typedef {object} RunStatus
 * @property {number} version
 * @property {string} runId
 * @property {string} rowId
 * @property {RunState} state
 * @property {number} createdAt
 * @property {number} updatedAt
 * @property {number} [startedAt]
 * @property {number} [endedAt]
 * @property {number} lastActivityAt
 * @property {string} [currentTool]
 * @property {string} [latestAssistant]
 * @property {string} [lastStopReason]
 * @property {string} [question]
 * @property {string[]} [questionOptions]
 * @property {"tool"|"heuristic"} [questionSource]
 * @property {string} [error]
 * @property {string} [stderrTail]
 * @property {number|null} [exitCode]
 * @property {string|null} [exitSignal]
 * @property {boolean} settled
 * @property {boolean} [stopRequested]
 * @property {boolean} [retryFailed]
 * @property {RunUsage} usage
 * @property {number} eventCount
 * @property {RunEvent[]} recentEvents
 * @property {string} [modelSummary]
 * @property {string} summary
 */

export const TERMINAL_STATES = ["needs_input", "completed", "idle", "failed", "stopped", "error"];
export const RECENT_EVENTS = 12;
const PREVIEW_CHARS = 400;

/** @param {string} state */
export function isTerminal(state) {
	return TERMINAL_STATES.includes(state);
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

const QUESTION_PATTERNS = [/should i\b/i, /which option/i, /please confirm/i, /need your input/i];

/** Fallback needs-input detection on the final assistant text. @param {string} text */
export function looksLikeQuestion(text) {
	const trimmed = text.trim();
	if (!trimmed) return false;
	if (trimmed.endsWith("?")) return true;
	return QUESTION_PATTERNS.some((pattern) => pattern.test(trimmed));
}

/** @param {string} text */
export function firstSentence(text) {
	const flat = text.replace(/\s+/g, " ").trim();
	const match = /^(.+?[.!?])(\s|$)/.exec(flat);
	const sentence = match?.[1] ?? flat;
	return sentence.length > 160 ? `${sentence.slice(0, 157)}...` : sentence;
}

/** @param {string} text @param {number} max */
function clip(text, max) {
	return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** @param {unknown} value @returns {Record<string, unknown>} */
function obj(value) {
	return value !== null && typeof value === "object" ? /** @type {Record<string, unknown>} */ (value) : {};
}

/** @param {unknown} message */
function messageText(message) {
	const content = obj(message).content;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((block) => (obj(block).type === "text" && typeof obj(block).text === "string" ? String(obj(block).text) : ""))
		.join("");
}

/** Short description of a tool call for the summary line. @param {string} name @param {unknown} args */
export function describeTool(name, args) {
	const a = obj(args);
	const detail = [a.command, a.path, a.file_path, a.pattern, a.question].find((v) => typeof v === "string");
	return clip(detail ? `${name}: ${String(detail).split("\n")[0]}` : name, 120);
}

/**
 * Summary priority (seed 003 section 6): model summary, active tool, question, first sentence of
 * the latest assistant text, error, then a plain status line.
 * @param {RunStatus} status
 */
export function summarize(status) {
	if (status.modelSummary) return status.modelSummary;
	if (status.currentTool && !isTerminal(status.state)) return `Running ${status.currentTool}`;
	if (status.question && status.state === "needs_input") return firstSentence(status.question);
	if (status.state === "failed" && status.error) return `Failed: ${firstSentence(status.error)}`;
	if (status.latestAssistant) return firstSentence(status.latestAssistant);
	if (status.error) return firstSentence(status.error);
	/** @type {Record<string, string>} */
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
	return fallback[status.state] ?? status.state;
}

/** @param {RunStatus} status @param {number} at @param {string} text */
function pushEvent(status, at, text) {
	status.recentEvents.push({ at, text: clip(text.replace(/\s+/g, " ").trim(), 200) });
	if (status.recentEvents.length > RECENT_EVENTS) status.recentEvents.splice(0, status.recentEvents.length - RECENT_EVENTS);
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
	if (type === "message_end") {
		const message = obj(event.message);
		if (message.role === "assistant") {
			const text = messageText(message).trim();
			if (text) {
				status.latestAssistant = clip(text, PREVIEW_CHARS);
				pushEvent(status, now, `assistant: ${text}`);
			}
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
			status.lastActivityAt = now;
		}
	} else if (type === "tool_execution_start") {
		const name = typeof event.toolName === "string" ? event.toolName : "tool";
		status.currentTool = describeTool(name, event.args);
		pushEvent(status, now, `tool ${status.currentTool}`);
		if (name === "ask_user") {
			const args = obj(event.args);
			if (typeof args.question === "string") {
				status.question = args.question;
				status.questionSource = "tool";
				status.questionOptions = Array.isArray(args.options) ? args.options.filter((o) => typeof o === "string") : undefined;
			}
		}
		status.lastActivityAt = now;
	} else if (type === "tool_execution_end") {
		status.currentTool = undefined;
		if (event.isError === true) pushEvent(status, now, `tool ${String(event.toolName)} failed`);
	} else if (type === "auto_retry_end") {
		if (event.success === false) {
			const finalError = typeof event.finalError === "string" ? event.finalError : "automatic retries failed";
			status.error = finalError;
			status.retryFailed = true;
		}
	} else if (type === "agent_settled") {
		status.settled = true;
	}
	status.summary = summarize(status);
	return status;
}

/**
 * Terminal state once the worker has exited.
 * @param {RunStatus} status
 * @param {{ code: number | null, signal: string | null, spawnError?: string, stopped?: boolean, now: number }} exit
 */
export function finalize(status, exit) {
	status.exitCode = exit.code;
	status.exitSignal = exit.signal;
	status.endedAt = exit.now;
	status.updatedAt = exit.now;
	status.lastActivityAt = exit.now;
	status.currentTool = undefined;
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
		const tail = status.stderrTail ? lastLine(status.stderrTail) : "";
		status.error = `worker exited with code ${exit.code}${tail ? `: ${tail}` : ""}`;
	} else if (!status.settled) {
		status.state = "failed";
		status.error = status.error ?? "worker exited before the run settled";
	} else if (status.lastStopReason === "error" || status.retryFailed) {
		status.state = "failed";
		status.error = status.error ?? "model error";
	} else if (status.question && status.questionSource === "tool") {
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
	pushEvent(status, exit.now, `${status.state}${status.error && status.state === "failed" ? `: ${status.error}` : ""}`);
	status.summary = summarize(status);
	return status;
}

/**
 * Ends a run on the extension's side, when the runner cannot record the end itself.
 * @param {RunStatus} status @param {number} now @param {"failed" | "stopped"} state @param {string} eventText
 */
function endFromOutside(status, now, state, eventText) {
	status.state = state;
	status.endedAt = now;
	status.updatedAt = now;
	status.lastActivityAt = now;
	status.currentTool = undefined;
	pushEvent(status, now, eventText);
	status.summary = summarize(status);
	return status;
}

/** The extension's verdict when the runner is gone but the status is not terminal. @param {RunStatus} status @param {number} now */
export function markRunnerDied(status, now) {
	status.error = "runner died";
	return endFromOutside(status, now, "failed", "failed: runner died");
}

/** The extension's verdict when a stop was requested but the runner could not record it. @param {RunStatus} status @param {number} now */
export function markStopped(status, now) {
	status.stopRequested = true;
	return endFromOutside(status, now, "stopped", "stopped");
}

/** @param {string} text */
function lastLine(text) {
	const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
	return clip(lines[lines.length - 1] ?? "", 200);
}
