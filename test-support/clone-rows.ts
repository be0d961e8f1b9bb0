/**
 * Many real rows fast: one row a real worker finished, copied on disk with fresh ids (the engine
 * reads them as it reads any row). Used where a test or bench needs a long board, not N runs.
 */
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { scanProcs } from "./proc-scan.ts";

/**
 * A row reads done once its end is recorded; its runner still writes the final status once more (a temp
 * file renamed over) and exits. Copying the row meanwhile can meet a file that just went (ENOENT).
 */
function waitForSeedRunner(storeDir: string, seedId: string): void {
	const rowDir = `${join(storeDir, "rows", seedId)}/`;
	const deadline = Date.now() + 30_000;
	while (
		scanProcs((argv) => argv.some((a) => a.endsWith("job-runner.mjs")) && argv.some((a) => a.startsWith(rowDir)))
			.length > 0
	) {
		if (Date.now() > deadline) throw new Error(`the runner of row ${seedId} did not exit in 30 s`);
		Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
	}
}

function rewriteIds(dir: string, from: string, to: string, name: string): void {
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) rewriteIds(path, from, to, name);
		else if (entry.name.endsWith(".json")) {
			let text = readFileSync(path, "utf8").split(from).join(to);
			if (entry.name === "meta.json") {
				const meta = JSON.parse(text) as Record<string, unknown>;
				meta.name = name;
				text = JSON.stringify(meta, null, 2);
			}
			writeFileSync(path, text);
		}
	}
}

/** Copies row `seedId` of the store `storeDir` as rows `<seedId>-c<from>` … `<seedId>-c<to - 1>`, named by `name(n)`. */
export function cloneRows(
	storeDir: string,
	seedId: string,
	from: number,
	to: number,
	name: (n: number) => string = (n) => `cloned row ${n}`,
): string[] {
	const rows = join(storeDir, "rows");
	waitForSeedRunner(storeDir, seedId);
	const ids: string[] = [];
	for (let n = from; n < to; n++) {
		const id = `${seedId}-c${n}`;
		cpSync(join(rows, seedId), join(rows, id), { recursive: true });
		rewriteIds(join(rows, id), seedId, id, name(n));
		ids.push(id);
	}
	return ids;
}
