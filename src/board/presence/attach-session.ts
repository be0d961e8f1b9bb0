/**
 * Which session file attach opens. A local row's own. A row that ran on a target has a local mirror of
 * its session whose header names the far side's directory (`/home/<host user>/.agent-board/work/<id>`,
 * or a container's `/workspace`): opening it would move this pi there. Attach opens a local copy instead,
 * its header's cwd the row's local worktree (where the work came back to), or refuses with the reason.
 * The copy is the user's from then on: attaching again keeps what was said in it while the row's session
 * has not grown since; once it has, a fresh copy is made beside it, numbered next (the older one stays).
 */
import {
	closeSync,
	existsSync,
	linkSync,
	openSync,
	readdirSync,
	readFileSync,
	readSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { ensureDir } from "../../../runner/store/fs-util.mjs";
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
	const copy = localCopy(readFileSync(row.sessionFile), row.worktreePath, row.sessionFile);
	const dir = join(storeDir, "attach", "sessions");
	ensureDir(dir);
	const earlier = readdirSync(dir)
		.filter((file) => file.startsWith(`${row.id}.`) && file.endsWith(".jsonl"))
		.sort()
		.reverse();
	// The newest copy that still starts with the row's session as it is now: what the user said in it stays.
	for (const file of earlier) {
		const path = join(dir, file);
		if (startsWithBytes(path, copy)) return path;
	}
	// Written whole under a name no one else has, then linked to the next number: a half-written copy is
	// never opened, and a copy made at the same moment (another pi attaching) is never replaced.
	const temp = join(dir, `.${row.id}.${process.pid}.${Date.now()}.tmp`);
	let next = earlier.length > 0 ? Number(earlier[0]?.split(".")[1]) + 1 : 1;
	if (!Number.isFinite(next)) next = earlier.length + 1;
	let path = "";
	try {
		writeFileSync(temp, copy, { mode: 0o600, flag: "wx" });
		for (; ; next++) {
			path = join(dir, `${row.id}.${String(next).padStart(6, "0")}.jsonl`);
			try {
				linkSync(temp, path);
				break;
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
			}
		}
	} finally {
		rmSync(temp, { force: true });
	}
	return path;
}

/** The session's bytes with its header's cwd set to `cwd`; a file that does not start with a header is refused. */
export function localCopy(bytes: Buffer, cwd: string, path: string): Buffer {
	const end = bytes.indexOf(0x0a);
	const first = (end < 0 ? bytes : bytes.subarray(0, end)).toString("utf8");
	let header: unknown;
	try {
		header = JSON.parse(first);
	} catch {
		header = undefined;
	}
	if (typeof header !== "object" || header === null || (header as { type?: unknown }).type !== "session")
		throw new BoardError("invalid", `cannot attach: ${path} does not start with a session header`);
	const rest = end < 0 ? Buffer.from("\n") : bytes.subarray(end);
	return Buffer.concat([Buffer.from(JSON.stringify({ ...header, cwd })), rest]);
}

/** Whether the file at `path` starts with `prefix`, reading only that many bytes. */
function startsWithBytes(path: string, prefix: Buffer): boolean {
	let fd: number | undefined;
	try {
		if (statSync(path).size < prefix.length) return false;
		fd = openSync(path, "r");
		const head = Buffer.alloc(prefix.length);
		let read = 0;
		while (read < head.length) {
			const n = readSync(fd, head, read, head.length - read, read);
			if (n === 0) return false;
			read += n;
		}
		return head.equals(prefix);
	} catch {
		return false;
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

function isDirectory(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}
