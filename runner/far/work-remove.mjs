// A row's workspace at an ssh target goes when its local worktree (the mirror) goes: the worktree the
// host cut from its bare mirror (`<dir>/work/<id>`, whatever it holds: the local worktree had all of
// it, fetched back) and the row's branch and refs there. The mirror itself stays (other rows share its
// objects), and so do the row's far session and runs. Only node:* imports and plain syntax: it is sent
// over ssh stdin to the host's node, as host-check.mjs is, so it needs no version of our files there.
import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** @param {string} cwd @param {string[]} args */
function gitIn(cwd, args) {
	return execFileSync("git", args, {
		cwd,
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
		timeout: 60000,
	}).trim();
}

/**
 * @param {string} dir the target's --dir (relative: to the login's home)
 * @param {string} rowId
 * @returns {{ path: string, removed: boolean }} `removed` false: there was nothing (any more)
 */
export function removeWork(dir, rowId) {
	if (!/^[a-z0-9][a-z0-9-]*$/.test(rowId)) throw new Error(`not a row id: ${JSON.stringify(rowId)}`);
	const path = join(resolve(homedir(), dir), "work", rowId);
	if (!existsSync(path)) return { path, removed: false };
	let mirror;
	try {
		mirror = resolve(path, gitIn(path, ["rev-parse", "--git-common-dir"]));
	} catch {
		mirror = undefined; // not a worktree any more (a half-made one): the directory alone goes
	}
	if (mirror) {
		try {
			gitIn(mirror, ["worktree", "remove", "--force", "--force", path]);
		} catch {
			rmSync(path, { recursive: true, force: true });
			gitIn(mirror, ["worktree", "prune"]);
		}
		for (const ref of [
			`refs/heads/agent-board/${rowId}`,
			`refs/agent-board/base/${rowId}`,
			`refs/agent-board/wip/${rowId}`,
		]) {
			try {
				gitIn(mirror, ["update-ref", "-d", ref]);
			} catch {
				// Not there: nothing to drop.
			}
		}
	}
	rmSync(path, { recursive: true, force: true });
	return { path, removed: true };
}
