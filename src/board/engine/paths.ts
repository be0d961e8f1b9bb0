import { join } from "node:path";
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { rowDirOf, runDirOf, sessionFileOf } from "../../../runner/store/store-layout.mjs";

/** User-scoped store: follows PI_CODING_AGENT_DIR; AGENT_BOARD_DIR overrides it. */
export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
	return env.AGENT_BOARD_DIR || join(getAgentDir(), "agent-board");
}

export interface StorePaths {
	root: string;
	rows: string;
	sessions: string;
	slots: string;
	worktrees: string;
	row(id: string): string;
	meta(id: string): string;
	runs(id: string): string;
	run(id: string, runId: string): string;
	session(id: string): string;
	worktree(id: string): string;
}

export function storePaths(root: string): StorePaths {
	const rows = join(root, "rows");
	return {
		root,
		rows,
		sessions: join(root, "sessions"),
		slots: join(root, "slots"),
		worktrees: join(root, "worktrees"),
		row: (id) => rowDirOf(root, id),
		meta: (id) => join(rows, id, "meta.json"),
		runs: (id) => join(rows, id, "runs"),
		run: (id, runId) => runDirOf(root, id, runId),
		session: (id) => sessionFileOf(root, id),
		worktree: (id) => join(root, "worktrees", id),
	};
}
