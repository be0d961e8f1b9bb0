/**
 * Where a test puts what the fixture's second Unix users (an ssh host's login, a remote engine's user)
 * must reach too: a release file their tool waits for, a --dir outside their home. Under TMPDIR when
 * every directory on the way lets others through; else under /tmp, since a private TMPDIR (0700, as CI
 * and users run the suite) would hide it from them.
 */
import { statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname } from "node:path";

/** Whether every directory from `dir` up to / lets other users through (their execute bit). */
function othersCanReach(dir: string): boolean {
	for (let at = dir; ; at = dirname(at)) {
		if ((statSync(at).mode & 0o001) === 0) return false;
		if (dirname(at) === at) return true;
	}
}

export function sharedScratchRoot(): string {
	if (othersCanReach(tmpdir())) return tmpdir();
	if (othersCanReach("/tmp")) return "/tmp";
	throw new Error(`neither TMPDIR (${tmpdir()}) nor /tmp lets other users through: a host user's files need one`);
}
