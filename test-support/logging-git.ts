/**
 * A `git` for the front of PATH that logs each call's arguments, one line each, and runs the real git
 * (its exec path's): a test counts what a process ran, or what the processes it started ran when only their
 * PATH has it. `refuse(true)` makes `git worktree add` fail as git would, with words of its own.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { waitDone } from "./board-helpers.ts";
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

/**
 * A row dispatched while `logged` refuses worktree adds: its run fails with git's words about `repo`, its
 * worktree is not there, and the row stays on the board. Returns the row, for its next run.
 */
export async function dispatchRefused(
	board: BoardEngine,
	logged: LoggingGit,
	repo: string,
	dispatch: () => Promise<BoardRow>,
): Promise<BoardRow> {
	logged.refuse(true);
	let row: BoardRow;
	try {
		row = await dispatch();
		const failed = await waitDone(board, row.id, 120_000);
		expect(failed.state).toBe("failed");
		expect(failed.error).toBe(
			`cannot make the row's worktree ${row.worktreePath}: git worktree in ${realpathSync(repo)}: ${REFUSED_WORDS}`,
		);
	} finally {
		logged.refuse(false);
	}
	expect(existsSync(row.worktreePath ?? "")).toBe(false);
	expect((await board.list()).map((listed) => listed.id)).toContain(row.id);
	return row;
}
