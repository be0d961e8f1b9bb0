/**
 * Which session file attach opens. A local row's own. A row that ran on a target has a local mirror of
 * its session whose header names the far side's directory (`/home/<host user>/.agent-board/work/<id>`,
 * or a container's `/workspace`): opening it would move this pi there. Attach opens a local copy instead,
 * its header's cwd the row's local worktree (where the work came back to), or refuses with the reason.
 * The copy is the user's from then on: attaching again keeps what was said in it while the row's session
 * has not grown since; once it has, a fresh copy is made beside it (the older one stays).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureDir, writeFileAtomic } from "../../../runner/store/fs-util.mjs";
import { BoardError } from "../../../runner/life/reasons.mjs";
import type { BoardRow } from "../engine/types.ts";
import { clean } from "../view-model/row-text.ts";

/** The session a row's attach opens: its own for a local row, a local copy for a row that ran elsewhere. */
export function attachSessionFor(storeDir: string, row: BoardRow): string {
	if (!row.target) return row.sessionFile;
	const name = clean(row.name);
	const where = clean(row.target);
	if (!row.worktreePath)
		throw new BoardError(
			"invalid",
			`cannot attach to ${name}: it ran on ${where} and has no worktree on this machine`,
		);
	if (!isDirectory(row.worktreePath))
		throw new BoardError(
			"invalid",
			`cannot attach to ${name}: its worktree on this machine is gone (${row.worktreePath}); it ran on ${where}`,
		);
	if (!existsSync(row.sessionFile))
		throw new BoardError(
			"invalid",
			`cannot attach to ${name}: its session has not come back from ${where} yet (${row.sessionFile})`,
		);
	const copy = localCopy(readFileSync(row.sessionFile, "utf8"), row.worktreePath, row.sessionFile);
	const dir = join(storeDir, "attach", "sessions");
	ensureDir(dir);
	const earlier = readdirSync(dir)
		.filter((file) => file.startsWith(`${row.id}.`) && file.endsWith(".jsonl"))
		.sort()
		.reverse();
	// The newest copy that still starts with the row's session as it is now: what the user said in it stays.
	for (const file of earlier) {
		const path = join(dir, file);
		if (readFileSync(path, "utf8").startsWith(copy)) return path;
	}
	const path = join(dir, `${row.id}.${String(Date.now()).padStart(15, "0")}.jsonl`);
	writeFileAtomic(path, copy);
	return path;
}

/** The session's lines with its header's cwd set to `cwd`; a file that does not start with a header is refused. */
export function localCopy(text: string, cwd: string, path: string): string {
	const end = text.indexOf("\n");
	const first = end < 0 ? text : text.slice(0, end);
	let header: unknown;
	try {
		header = JSON.parse(first);
	} catch {
		header = undefined;
	}
	if (typeof header !== "object" || header === null || (header as { type?: unknown }).type !== "session")
		throw new BoardError("invalid", `cannot attach: ${path} does not start with a session header`);
	return `${JSON.stringify({ ...header, cwd })}${end < 0 ? "\n" : text.slice(end)}`;
}

function isDirectory(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}
