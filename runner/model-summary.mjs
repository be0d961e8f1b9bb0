// The optional one-line model summary of a finished run (AGENT_BOARD_SUMMARY_MODEL): `pi -p
// --no-session` with the prompt on stdin (never argv), bounded by a timeout, never delaying the final state.
import { spawn } from "node:child_process";

/**
 * @param {import("./life/run-config.mjs").RunConfig} config
 * @param {import("../src/board/engine/types.ts").RunStatus} status the finished run's status
 * @param {NodeJS.ProcessEnv} env the runner's environment without the run's tag
 * @returns {Promise<string>} the summary's first line ("" when there is none)
 */
export async function modelSummary(config, status, env) {
	const command = config.piCommand[0] ?? "pi";
	const prompt = `Summarize in one short sentence (max 15 words) what this agent run achieved or is blocked on:\n\n${status.latestAssistant ?? status.error ?? status.state}`;
	const args = [...config.piCommand.slice(1), "-p", "--no-session", "--model", String(config.summaryModel)];
	const text = await new Promise((resolve) => {
		let out = "";
		const child = spawn(command, args, {
			cwd: config.cwd,
			env: { ...env, ...config.env, AGENT_BOARD_WORKER: "" },
			stdio: ["pipe", "pipe", "ignore"],
		});
		const timer = setTimeout(() => child.kill("SIGKILL"), config.summaryTimeoutMs ?? 30_000);
		child.stdin.on("error", () => undefined);
		child.stdin.end(prompt);
		child.stdout.setEncoding("utf8").on("data", (/** @type {string} */ c) => (out += c));
		child.on("error", () => resolve(""));
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve(code === 0 ? out.trim() : "");
		});
	});
	return typeof text === "string" && text ? (text.split("\n")[0] ?? "").slice(0, 200) : "";
}
