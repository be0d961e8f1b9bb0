/** Shared by target tests: a link-like log of follow frames, a worktree's files, command-line scans. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { Frame } from "../runner/targets/frames.mjs";

export interface FollowLog {
	frames: Frame[];
	/** The session file as the link's mirror would hold it. */
	session: Buffer;
	end: Record<string, unknown> | undefined;
	git: { head: string; wip: string } | undefined;
	add(frame: Frame): void;
	seqs(): number[];
	eventLines(): string[];
	lastSeq(): number;
}

/** Collects follow frames across reconnects, applying session chunks at their offsets. */
export function followLog(): FollowLog {
	const frames: Frame[] = [];
	const events = (): Extract<Frame, { t: "event" }>[] => frames.filter((f): f is Extract<Frame, { t: "event" }> => f.t === "event");
	const log: FollowLog = {
		frames,
		session: Buffer.alloc(0),
		end: undefined,
		git: undefined,
		add(frame) {
			frames.push(frame);
			if (frame.t === "session") {
				const bytes = Buffer.from(frame.data, "base64");
				log.session = frame.reset ? bytes : Buffer.concat([log.session.subarray(0, frame.offset), bytes]);
			}
			if (frame.t === "end") log.end = frame.status;
			if (frame.t === "git") log.git = { head: frame.head, wip: frame.wip };
		},
		seqs: () => events().map((f) => f.seq),
		eventLines: () => events().map((f) => f.line),
		lastSeq: () => Math.max(0, ...events().map((f) => f.seq)),
	};
	return log;
}

/** Every file under `dir` except .git: relative path -> executable bit + bytes. */
export function farTree(dir: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (path: string): void => {
		for (const name of readdirSync(path)) {
			if (path === dir && name === ".git") continue;
			const full = join(path, name);
			const stat = statSync(full);
			if (stat.isDirectory()) walk(full);
			else out[relative(dir, full)] = `${(stat.mode & 0o111) !== 0 ? "x" : "-"} ${readFileSync(full, "base64")}`;
		}
	};
	walk(dir);
	return out;
}

/** Live processes (any user) whose command line contains `needle`, this process excluded. */
export function procsMentioning(needle: string): { pid: number; argv: string[] }[] {
	const out: { pid: number; argv: string[] }[] = [];
	for (const name of readdirSync("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
		try {
			const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
			const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
			if (cmdline.includes(needle) && state !== "Z") out.push({ pid, argv: cmdline.split("\0").filter(Boolean) });
		} catch {
			// Exited while we looked.
		}
	}
	return out;
}
