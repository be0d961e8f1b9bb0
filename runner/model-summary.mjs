// The optional one-line model summary of a finished run (AGENT_BOARD_SUMMARY_MODEL): one question through
// pi (one-shot.mjs) with no tools, context files, skills or templates (the run's last words are untrusted:
// they must not be able to start a tool), bounded by a timeout, never delaying the final state.
import { askOnce } from "./one-shot.mjs";

/**
 * @param {import("./life/run-config.mjs").RunConfig} config
 * @param {import("../src/board/engine/types.ts").RunStatus} status the finished run's status
 * @param {NodeJS.ProcessEnv} env the runner's environment without the run's tag
 * @returns {Promise<string>} the summary's first line ("" when there is none)
 */
export async function modelSummary(config, status, env) {
	const answer = await askOnce({
		piCommand: config.piCommand,
		args: ["--no-tools", "-nc", "-ns", "-np", "--model", String(config.summaryModel)],
		request: `Summarize in one short sentence (max 15 words) what this agent run achieved or is blocked on:\n\n${status.latestAssistant ?? status.error ?? status.state}`,
		env: { ...env, ...config.env, AGENT_BOARD_WORKER: "", AGENT_BOARD_CONTROL_FD: "", PONYTAIL_DEFAULT_MODE: "off" },
		cwd: config.cwd,
		timeoutMs: config.summaryTimeoutMs ?? 30_000,
		timeoutWords: "the summary model did not answer in time",
	});
	return answer.error ? "" : (answer.text.trim().split("\n")[0] ?? "").slice(0, 200);
}
