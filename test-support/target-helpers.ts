/** Shared by target tests: a link-like log of follow frames, a worktree's files, command-line scans, a store's containers, the attempts walk-through. */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { expect } from "vitest";
import type { Frame } from "../runner/far/frames.mjs";
import { containerListArgs } from "../runner/kinds/container/container-argv.mjs";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { waitDone } from "./board-helpers.ts";
import type { ModelServer } from "./model-server.ts";

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
	const events = (): Extract<Frame, { t: "event" }>[] =>
		frames.filter((f): f is Extract<Frame, { t: "event" }> => f.t === "event");
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

/**
 * The attempts walk-through every target kind runs: three attempts on `target` each rewrite shared.txt
 * and write a file of their own; compare and its diff run here, and the third attempt is merged.
 * `whileRunning` gets the rows before any is awaited (the container test sees one container per attempt).
 */
/** The local podman's containers, running or not, that a board with this store made (by their store label). */
export function containersOfStore(store: string): string[] {
	return spawnSync("podman", containerListArgs("podman", undefined, store), { encoding: "utf8" })
		.stdout.split("\n")
		.filter(Boolean);
}

/** A fixture's teardown: removes whatever containers its store left. */
export function removeContainersOfStore(store: string): void {
	const left = containersOfStore(store);
	if (left.length) spawnSync("podman", ["rm", "-f", ...left], { stdio: "ignore" });
}

export async function threeAttemptsMergeOne(
	board: BoardEngine,
	model: ModelServer,
	options: { tag: string; target: string; repo: string; whileRunning?: (rows: BoardRow[]) => Promise<void> },
): Promise<void> {
	const { tag, target, repo } = options;
	model.setScript({
		rules: [
			{
				match: tag,
				steps: [
					{
						toolCall: {
							name: "bash",
							args: {
								command: `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt && echo mine > "own-$AGENT_BOARD_ROW.txt"`,
							},
						},
					},
					{ text: "Wrote my attempt." },
				],
			},
		],
	});
	const rows = await board.dispatchAttempts({ prompt: `${tag} rewrite shared.txt`, cwd: repo, target, count: 3 });
	expect(rows.map((r) => r.target)).toEqual([target, target, target]);
	await options.whileRunning?.(rows);
	for (const row of rows)
		expect(await waitDone(board, row.id, 120_000)).toMatchObject({ state: "completed", error: undefined });
	const set = await board.compare(rows[1]?.id ?? "");
	expect(set.rows.map((entry) => entry.files)).toEqual(rows.map((row) => [`own-${row.id}.txt`, "shared.txt"]));
	const diff = (await board.compareDiff(rows[0]?.id ?? "", rows[1]?.id ?? "")).join("\n");
	expect(diff).toContain(`+attempt ${rows[1]?.id}`);
	expect((await board.merge(rows[2]?.id ?? "", { commit: true })).status).toBe("merged");
	expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe(`attempt ${rows[2]?.id}\n`);
}
