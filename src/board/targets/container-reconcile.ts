/**
 * No container outlives its run: a killed link, a board restart or a crashed pi must not leave one
 * running that no row owns. Board reads look for them (by label, at most once a minute per process,
 * in the background) and remove those whose run is over or whose row is gone. A run that is not over
 * keeps its container: its link is alive, or the next read starts a new one.
 */
import { existsSync } from "node:fs";
import { reconcile } from "../../../runner/kinds/container/container-transport.mjs";
import { runEnded } from "../../../runner/life/state-rules.mjs";
import type { EngineContext } from "../engine/engine-context.ts";
import { isValidId } from "../engine/ids.ts";
import { FileCache, readMeta, readStatus } from "../engine/store.ts";
import { readBoardConfig } from "./board-config.ts";

const EVERY_MS = 60_000;

export function containerReconciler(ctx: EngineContext): { maybe(): void; now(): Promise<string[]> } {
	let last = 0;
	let running: Promise<string[]> | undefined;

	function runIsLive(rowId: string, runId: string): boolean {
		if (!isValidId(rowId) || !existsSync(ctx.paths.row(rowId))) return false;
		try {
			const meta = readMeta(ctx.paths, rowId, new FileCache());
			if (meta.currentRunId !== runId) return false;
			return !runEnded(readStatus(ctx.paths.run(rowId, runId), new FileCache()));
		} catch {
			// An unreadable row keeps its container: removing it could lose work the row cannot show.
			return true;
		}
	}

	async function sweep(): Promise<string[]> {
		let targets;
		try {
			targets = Object.entries(readBoardConfig(ctx.storeDir).targets);
		} catch {
			return [];
		}
		const removed: string[] = [];
		for (const [name, target] of targets) {
			if (target.kind !== "container") continue;
			const result = await reconcile(ctx.storeDir, { ...target, name }, runIsLive);
			removed.push(...result.removed);
		}
		return removed;
	}

	const now = (): Promise<string[]> => {
		running ??= sweep().finally(() => (running = undefined));
		return running;
	};

	return {
		maybe() {
			if (running || Date.now() - last < EVERY_MS) return;
			last = Date.now();
			void now().catch(() => undefined);
		},
		now,
	};
}
