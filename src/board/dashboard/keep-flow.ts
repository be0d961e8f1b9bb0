/**
 * "Keep this one" from compare: the plan first (the merge, the attempts archived with their worktrees
 * removed, the ones whose uncommitted work would be lost), one question, then keep-attempt.ts does it.
 * A conflict opens the same reply as merge's; worktrees refused for uncommitted work are a second,
 * explicit question before they go (as `w` asks before forcing).
 */
import { clearOthers, type KeepPlan, keepAttempt, planKeep } from "../engine/keep-attempt.ts";
import type { BoardRow } from "../engine/types.ts";
import { clean } from "../view-model/row-text.ts";
import { message } from "../view-model/ui-types.ts";
import { ConfirmView } from "./confirm-view.ts";
import { plural } from "./merge-flow.ts";
import { ReplyView } from "./reply-view.ts";
import type { Host } from "./view.ts";

function tag(row: BoardRow): string {
	return row.attempt ? `#${row.attempt.index}` : row.id;
}

function files(paths: readonly string[]): string {
	const shown = paths.slice(0, 4).map(clean).join(", ");
	return paths.length > 4 ? `${shown}, …` : shown;
}

export function keepQuestion(plan: KeepPlan): { question: string; details: string[] } {
	const { keep, merge, others } = plan;
	const what: string[] = [];
	if (merge) {
		const parts = [plural(merge.files.length, "file")];
		if (merge.uncommitted.length > 0)
			parts.push(`after committing its ${plural(merge.uncommitted.length, "uncommitted change")}`);
		what.push(`merge it into ${clean(merge.into)} (${parts.join(", ")})`);
	}
	if (others.length > 0)
		what.push(
			`archive ${others.map((other) => tag(other.row)).join(", ")} and remove ${others.length === 1 ? "its worktree" : "their worktrees"}`,
		);
	const question = `Keep ${tag(keep)} ${clean(keep.name)}: ${what.join(", then ") || "nothing left to do"}?`;
	const details = others
		.filter((other) => other.uncommitted.length > 0)
		.map(
			(other) =>
				`${tag(other.row)} has ${plural(other.uncommitted.length, "uncommitted change")} (${files(other.uncommitted)}): you are asked again before they are lost`,
		);
	return { question, details };
}

/** Plans the keep (nothing changes), asks, keeps; `after` runs once the set changed (compare reloads). */
export function startKeep(host: Host, row: BoardRow, after: () => void): void {
	host.setStatus(`planning to keep ${clean(row.name)}…`);
	planKeep(host.deps.service, row.id).then(
		(plan) => {
			host.setStatus("");
			const { question, details } = keepQuestion(plan);
			host.push(new ConfirmView(host, question, () => keep(host, row, after), details));
		},
		(error: unknown) => host.setStatus(`keep: ${message(error)}`),
	);
}

async function keep(host: Host, row: BoardRow, after: () => void): Promise<void> {
	host.setStatus(`keeping ${clean(row.name)}…`);
	let result: Awaited<ReturnType<typeof keepAttempt>>;
	try {
		result = await keepAttempt(host.deps.service, row.id, { commit: true });
	} catch (error) {
		host.setStatus(`keep failed: ${message(error)}`);
		return;
	}
	await host.deps.feed.refresh([row.id, ...result.plan.others.map((other) => other.row.id)]);
	after();
	if (result.status === "conflict") {
		host.push(new ReplyView(host, row.id, { text: result.merge.followUp }));
		host.setStatus(
			`merge conflict in ${result.merge.files.map(clean).join(", ")}; nothing was changed. Send the row this follow-up, then keep it again:`,
		);
		return;
	}
	const merged = result.merge
		? `merged into ${clean(result.merge.plan.into)} as ${result.merge.commit.slice(0, 12)}; `
		: "";
	const done = `kept ${tag(row)} ${clean(row.name)}: ${merged}archived ${result.archived.length}, removed ${plural(result.removed.length, "worktree")}`;
	host.setStatus(done);
	const refused = result.plan.others.filter((other) => result.refused.some((r) => r.id === other.row.id));
	if (refused.length === 0) return;
	const lost = refused
		.map((other) => `${tag(other.row)}${other.uncommitted.length > 0 ? ` (${files(other.uncommitted)})` : ""}`)
		.join(", ");
	host.push(
		new ConfirmView(
			host,
			`Remove the worktree${refused.length === 1 ? "" : "s"} of ${lost} anyway, losing ${refused.length === 1 ? "its" : "their"} uncommitted changes?`,
			async () => {
				const forced = await clearOthers(
					host.deps.service,
					refused.map((other) => other.row),
					true,
				);
				await host.deps.feed.refresh(refused.map((other) => other.row.id));
				after();
				const failed = forced.refused.map((r) => `${r.id}: ${r.reason}`).join("; ");
				host.setStatus(
					failed
						? `${done}; still kept: ${failed}`
						: `${done}; removed ${plural(forced.removed.length, "more worktree")}`,
				);
			},
		),
	);
}
