/**
 * Whether this pi is a board worker (the runner sets AGENT_BOARD_WORKER=1): a check that loads nothing else.
 * @param {NodeJS.ProcessEnv} [env]
 */
export function isWorker(env = process.env) {
	return env.AGENT_BOARD_WORKER === "1";
}
