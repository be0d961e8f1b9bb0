// One question to a model through pi, outside any run: `pi --mode json -p --no-session` with the request
// on stdin (never argv), bounded by a timeout, killed by its verified pid. The supervisor's model and a
// finished run's summary both ask this way. JSON mode exits 0 even when the model call failed, so the
// assistant message's stopReason and errorMessage decide, not the exit code.
import { spawn } from "node:child_process";
import { JsonLines } from "./json-lines.mjs";
import { processStartTime, signalVerified } from "./store/proc.mjs";

/**
 * @typedef {object} OneShotAnswer
 * @property {string} text      the last assistant message's text
 * @property {number} tokens    summed over the assistant messages
 * @property {number} cost
 * @property {string} [model]   "provider/model" that answered
 * @property {string} [error]   why there is no answer (the model's error, a timeout, pi's exit)
 * @property {boolean} [timedOut]
 */

/**
 * Asks once. Never throws: a failure is an answer with `error`.
 * @param {{ piCommand: string[], args: string[], request: string, env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number, timeoutWords: string, onChild?: (kill: () => void) => void }} options
 *   args: pi's options after `--mode json -p --no-session`; timeoutWords: the error when it times out.
 * @returns {Promise<OneShotAnswer>}
 */
export function askOnce(options) {
	const command = options.piCommand[0] ?? "pi";
	const args = [...options.piCommand.slice(1), "--mode", "json", "-p", "--no-session", ...options.args];
	return new Promise((resolve) => {
		let tokens = 0;
		let cost = 0;
		let text = "";
		let error = "";
		let model = "";
		let stderr = "";
		let settled = false;
		const lines = new JsonLines();
		const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
		const start = child.pid ? processStartTime(child.pid) : undefined;
		const kill = () => {
			if (child.pid && child.exitCode === null) signalVerified(child.pid, start, "SIGKILL");
		};
		options.onChild?.(kill);
		/** @type {string | undefined} */
		let timedOut;
		const timer = setTimeout(() => {
			// Said in words: the kill that follows would otherwise read as "pi exited with code null".
			timedOut = options.timeoutWords;
			kill();
			done(timedOut);
		}, options.timeoutMs);
		/** @param {Record<string, unknown> | undefined} event */
		const onEvent = (event) => {
			const message = /** @type {Record<string, unknown> | undefined} */ (
				event?.type === "message_end" ? event.message : undefined
			);
			if (message?.role !== "assistant") return;
			const usage = /** @type {{ totalTokens?: unknown, cost?: { total?: unknown } } | undefined} */ (message.usage);
			if (typeof usage?.totalTokens === "number") tokens += usage.totalTokens;
			if (typeof usage?.cost?.total === "number") cost += usage.cost.total;
			if (typeof message.provider === "string" && typeof message.model === "string")
				model = `${message.provider}/${message.model}`;
			const content = Array.isArray(message.content) ? message.content : [];
			text = content
				.map((block) => (block?.type === "text" && typeof block.text === "string" ? block.text : ""))
				.join("");
			if (message.stopReason === "error" || typeof message.errorMessage === "string")
				error = String(message.errorMessage ?? "model error");
		};
		const done = (/** @type {string | undefined} */ failure) => {
			if (settled) return;
			settled = true;
			clearTimeout(timer);
			const why = timedOut ?? failure ?? (error || undefined);
			resolve({
				text,
				tokens,
				cost,
				...(why ? { error: why } : {}),
				...(timedOut ? { timedOut: true } : {}),
				...(model ? { model } : {}),
			});
		};
		child.stdout.setEncoding("utf8").on("data", (/** @type {string} */ chunk) => {
			for (const event of lines.push(chunk)) onEvent(event);
		});
		child.stderr
			.setEncoding("utf8")
			.on("data", (/** @type {string} */ chunk) => (stderr = (stderr + chunk).slice(-2000)));
		child.stdin.on("error", () => undefined);
		child.stdin.end(options.request);
		child.on("error", (spawnError) => done(`could not start pi: ${spawnError.message}`));
		child.on("close", (code) => {
			onEvent(lines.flush());
			const last = stderr.trim().split("\n").at(-1) ?? "";
			done(code === 0 ? undefined : `pi exited with code ${code}${last ? `: ${last}` : ""}`);
		});
	});
}
