/** Hand-built store rows for the hardening tests: real files in the real layout, no runner needed. */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { initialStatus } from "../runner/life/state-rules.mjs";
import { storePaths, type StorePaths } from "../src/board/engine/paths.ts";
import type { RowMeta, RunStatus } from "../src/board/engine/types.ts";

export function tempStore(prefix = "pab-hard-"): { root: string; store: string; paths: StorePaths } {
	const root = mkdtempSync(join(tmpdir(), prefix));
	const store = join(root, "store");
	mkdirSync(join(store, "rows"), { recursive: true, mode: 0o700 });
	return { root, store, paths: storePaths(store) };
}

/** Temp stores for one test file, all removed after its tests: `const store = tempStores();`, then `store()`. */
export function tempStores(prefix?: string): () => ReturnType<typeof tempStore> {
	const roots: string[] = [];
	afterAll(() => {
		for (const root of roots) rmSync(root, { recursive: true, force: true });
	});
	return () => {
		const made = tempStore(prefix);
		roots.push(made.root);
		return made;
	};
}

export interface FixtureRow {
	id: string;
	runId: string;
	runDir: string;
	meta: RowMeta;
	status: RunStatus;
}

/** Writes rows/<id>/meta.json and runs/<runId>/status.json; `metaPatch`/`statusPatch` override fields verbatim. */
export function writeRow(
	paths: StorePaths,
	id: string,
	options: {
		state?: RunStatus["state"];
		metaPatch?: Record<string, unknown>;
		statusPatch?: Record<string, unknown>;
		runId?: string;
		at?: number;
	} = {},
): FixtureRow {
	const at = options.at ?? Date.now();
	const runId = options.runId ?? `run-${id}`;
	const runDir = paths.run(id, runId);
	mkdirSync(runDir, { recursive: true, mode: 0o700 });
	const meta: RowMeta = {
		version: 1,
		id,
		name: `row ${id}`,
		cwd: "/tmp",
		runCwd: "/tmp",
		sessionFile: paths.session(id),
		createdAt: at,
		updatedAt: at,
		pinned: false,
		archived: false,
		worktreeMode: "none",
		currentRunId: runId,
	};
	const status = initialStatus(runId, id, at);
	status.state = options.state ?? "completed";
	status.latestAssistant = "Done.";
	status.summary = "Done.";
	// Only a finished run has an end; a planted "working" row must look like a run whose runner vanished.
	if (!["queued", "working"].includes(status.state)) status.endedAt = at;
	status.recentEvents = [{ at, text: "assistant: Done." }];
	writeFileSync(paths.meta(id), JSON.stringify({ ...meta, ...options.metaPatch }), { mode: 0o600 });
	writeFileSync(join(runDir, "status.json"), JSON.stringify({ ...status, ...options.statusPatch }), { mode: 0o600 });
	return { id, runId, runDir, meta, status };
}

/** Every control or escape byte a terminal would act on (C0 except \n and \t, DEL, C1). */
export const TERMINAL_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** Every file under dir with its bytes, to prove a command rewrote nothing. */
export function fileSnapshot(dir: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (path: string): void => {
		for (const entry of readdirSync(path, { withFileTypes: true })) {
			const full = join(path, entry.name);
			if (entry.isDirectory()) walk(full);
			else if (entry.isFile()) out[full] = readFileSync(full, "latin1");
		}
	};
	walk(dir);
	return out;
}
