/**
 * Nothing a kind leaves at a target outlives its run: a killed link, a board restart or a crashed pi
 * must not leave, say, a container running that no row owns. Each kind that can leave something
 * (its object's `reconcile`: containers, by label) is asked at most once a minute per process, in the
 * background, to remove what belongs to runs that are over or to rows that are gone. A run that is not
 * over keeps what it has: its link is alive, or a new one takes it over.
 */
import { existsSync } from "node:fs";
import { kindOf } from "../../../runner/kinds/kinds.mjs";
import { readBoardConfig } from "../../../runner/life/board-config.mjs";
import { runEnded } from "../../../runner/life/state-rules.mjs";
import type { EngineContext } from "./engine-context.ts";
import { isValidId } from "./ids.ts";
import { FileCache, readMeta, readStatus } from "./store.ts";

const EVERY_MS = 60_000;

export function targetsReconciler(ctx: EngineContext): { maybe(): void; now(): Promise<string[]> } {
	let last = 0;
	let running: Promise<string[]> | undefined;

	function runIsLive(rowId: string, runId: string): boolean {
		if (!isValidId(rowId) || !existsSync(ctx.paths.row(rowId))) return false;
		try {
			const meta = readMeta(ctx.paths, rowId, new FileCache());
			if (meta.currentRunId !== runId) return false;
			return !runEnded(readStatus(ctx.paths.run(rowId, runId), new FileCache()));
		} catch {
			// An unreadable row keeps what it has: removing it could lose work the row cannot show.
			return true;
		}
	}

	async function sweep(): Promise<string[]> {
		let targets: [string, ReturnType<typeof readBoardConfig>["targets"][string]][];
		try {
			targets = Object.entries(readBoardConfig(ctx.storeDir).targets);
		} catch {
			return [];
		}
		const removed: string[] = [];
		for (const [name, target] of targets) {
			const reconcile = kindOf(target).reconcile;
			if (!reconcile) continue;
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
