/**
 * Where a dispatched row runs. `local` (or nothing) is this machine, as always; any other name must be
 * a target of the board's config, and the row then needs a git repository with a commit: code travels
 * to the target by git and comes back the same way, so it always gets its own worktree.
 */
import { LOCAL_TARGET } from "../../../runner/life/vocabulary.mjs";
import { readBoardConfig } from "../../../runner/life/board-config.mjs";
import { BoardError } from "../../../runner/life/reasons.mjs";
import { checkBranchable } from "./dispatch-checks.ts";
import type { TargetSnapshot } from "./types.ts";

/** The target a dispatch names, checked, with the commit its row's worktree branches from: undefined for this machine. */
export function checkDispatchTarget(
	storeDir: string,
	target: unknown,
	cwd: unknown,
): { name: string; base: string } | undefined {
	if (target === undefined || target === LOCAL_TARGET) return undefined;
	if (typeof target !== "string" || !target)
		throw new BoardError("invalid", `target must be a target's name (got ${JSON.stringify(target)})`);
	const known = Object.keys(readBoardConfig(storeDir).targets);
	if (!known.includes(target)) {
		const names = [LOCAL_TARGET, ...known].join(", ");
		throw new BoardError(
			"invalid",
			`unknown target ${target} (targets: ${names}; add one with /agent-board targets add)`,
		);
	}
	const { base } = checkBranchable(cwd, `running on ${target} (code travels there by git)`);
	return { name: target, base };
}

/** A run's copy of its target's config (run.json /target), read now: a target removed since refuses. */
export function targetSnapshot(storeDir: string, name: string): TargetSnapshot {
	const config = readBoardConfig(storeDir).targets[name];
	if (!config)
		throw new BoardError(
			"invalid",
			`target ${name} does not exist any more (it was removed); start a new row on another target`,
		);
	return { ...config, name };
}
