/** Helpers for board engine tests: a service bound to a test agent, waiting for terminal rows. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { PI_CLI, waitFor, type TestAgent } from "./pi-harness.ts";

export const ACTIVE = ["queued", "working"];

export function boardFor(
	agent: TestAgent,
	options: { maxConcurrent?: number; piCommand?: string[]; stopGraceMs?: number } = {},
): BoardEngine {
	return createBoardService({
		storeDir: join(agent.root, "store"),
		piCommand: options.piCommand ?? [process.execPath, PI_CLI],
		maxConcurrent: options.maxConcurrent ?? 8,
		stopGraceMs: options.stopGraceMs,
		env: agent.env,
	});
}

export async function waitDone(board: BoardEngine, id: string, timeoutMs = 40_000): Promise<BoardRow> {
	return waitFor(
		async () => {
			const row = await board.get(id);
			// needs_input may still be live (a question waiting in place): done means no process owns the run.
			return row && !row.alive && !ACTIVE.includes(row.state) ? row : undefined;
		},
		`row ${id} to finish`,
		timeoutMs,
		100,
	);
}

export function readEvents(runDir: string): Array<Record<string, unknown>> {
	return readFileSync(join(runDir, "events.jsonl"), "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Every file and directory under root with its permission bits. */
export function modes(root: string): Array<{ path: string; dir: boolean; mode: number }> {
	const out: Array<{ path: string; dir: boolean; mode: number }> = [];
	const walk = (dir: string): void => {
		for (const name of readdirSync(dir)) {
			const path = join(dir, name);
			const stat = statSync(path);
			out.push({ path, dir: stat.isDirectory(), mode: stat.mode & 0o777 });
			if (stat.isDirectory()) walk(path);
		}
	};
	out.push({ path: root, dir: true, mode: statSync(root).mode & 0o777 });
	walk(root);
	return out;
}

/** The row once `test` holds for it (a hang guard of `timeoutMs`, not a timing assert). */
export async function rowWhere(
	board: BoardEngine,
	id: string,
	what: string,
	test: (row: BoardRow) => boolean,
	timeoutMs = 60_000,
): Promise<BoardRow> {
	return waitFor(
		async () => {
			const row = await board.get(id);
			return row && test(row) ? row : undefined;
		},
		what,
		timeoutMs,
	);
}
