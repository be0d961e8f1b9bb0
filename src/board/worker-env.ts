/** Whether this pi is a board worker (the runner sets AGENT_BOARD_WORKER=1): a check that loads nothing else. */
export function isWorker(env: NodeJS.ProcessEnv = process.env): boolean {
	return env.AGENT_BOARD_WORKER === "1";
}
