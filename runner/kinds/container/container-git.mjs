// Runs inside a container: git work in /workspace that must never run on the user's side, because git
// porcelain in a workspace an agent has had runs its .git/config (fsmonitor, filters, hooks). Prints
// one JSON line. Usage (inside):
//   node container-git.mjs snapshot <rowId>       uncommitted work -> refs/agent-board/wip/<rowId>: { head, wip, tree }
//   node container-git.mjs sync <rowId> <base>    a follow-up run starts from the local branch: { head, action }
import { IN } from "./container-argv.mjs";
import { snapshotWip, syncWorktree } from "../../far/git-workspace.mjs";

// Our own commands run none of the agent's hooks or fsmonitor (they could abort or stall them; its
// filters still apply, inside). Config from the environment outranks the repository's.
Object.assign(process.env, {
	GIT_CONFIG_COUNT: "2",
	GIT_CONFIG_KEY_0: "core.hooksPath",
	GIT_CONFIG_VALUE_0: "/dev/null",
	GIT_CONFIG_KEY_1: "core.fsmonitor",
	GIT_CONFIG_VALUE_1: "false",
});

const [verb, rowId = "", base = ""] = process.argv.slice(2);
try {
	let result;
	if (verb === "snapshot") result = await snapshotWip(IN.workspace, rowId);
	// The clone borrows the user's objects (alternates), so the base the link names is readable here.
	else if (verb === "sync") result = syncWorktree({ mirror: IN.workspace, worktree: IN.workspace, rowId, base });
	else throw new Error(`unknown verb ${JSON.stringify(verb)} (snapshot, sync)`);
	process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
	process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
	process.exit(1);
}
