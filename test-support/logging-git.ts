/**
 * A `git` for the front of PATH that logs each call's arguments, one line each, and runs the real git
 * (its exec path's): a test counts what a process ran, or what the processes it started ran when only their
 * PATH has it. `refuse(true)` makes `git worktree add` fail as git would, with words of its own.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git } from "./git-repo.ts";

export const REFUSED_WORDS = "fatal: refused by the test's git";

export interface LoggingGit {
	/** The directory to put first on PATH. */
	bin: string;
	/** Every logged call's arguments, in order. */
	calls(): string[];
	/** The logged `worktree add` calls, without the `worktree add`. */
	worktreeAdds(): string[];
	refuse(on: boolean): void;
}

/** The wrapper in `<dir>/bin` (made), its log and switch beside it. */
export function loggingGit(dir: string): LoggingGit {
	const bin = join(dir, "bin");
	mkdirSync(bin, { recursive: true });
	const log = join(dir, "git-calls");
	const refuse = join(dir, "git-refuses");
	writeFileSync(log, "");
	const realGit = join(git(dir, "--exec-path"), "git");
	writeFileSync(
		join(bin, "git"),
		[
			"#!/bin/sh",
			`echo "$*" >> '${log}'`,
			`if [ "$1" = worktree ] && [ "$2" = add ] && [ -e '${refuse}' ]; then echo "${REFUSED_WORDS}" >&2; exit 128; fi`,
			`exec '${realGit}' "$@"`,
			"",
		].join("\n"),
	);
	chmodSync(join(bin, "git"), 0o755);
	const calls = () => readFileSync(log, "utf8").split("\n").filter(Boolean);
	return {
		bin,
		calls,
		worktreeAdds: () =>
			calls()
				.filter((line) => line.startsWith("worktree add "))
				.map((line) => line.slice("worktree add ".length)),
		refuse(on) {
			if (on) writeFileSync(refuse, "");
			else if (existsSync(refuse)) rmSync(refuse);
		},
	};
}
