/**
 * "Keep this one" from compare: the plan first (the merge, the attempts archived with their worktrees
 * removed, the ones whose uncommitted work would be lost), one question, then keep-attempt.ts does it.
 * A conflict opens the same reply as merge's; worktrees refused for uncommitted work are a second,
 * explicit question before they go (as `w` asks before forcing).
 */
import { clearOthers, keepAttempt, planKeep } from "../engine/keep-attempt.ts";
import type { BoardRow } from "../engine/types.ts";
import { forcedText, keepQuestion, keptText, refusedOf } from "../view-model/keep-text.ts";
import { clean } from "../view-model/row-text.ts";
import { message } from "../view-model/ui-types.ts";
import { ConfirmView } from "./confirm-view.ts";
import { ReplyView } from "./reply-view.ts";
import type { Host } from "./view.ts";

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
	const done = keptText(row, result);
	host.setStatus(done);
	const refused = refusedOf(result);
	if (!refused.question) return;
	host.push(
		new ConfirmView(host, refused.question, async () => {
			const forced = await clearOthers(host.deps.service, refused.rows, true);
			await host.deps.feed.refresh(refused.rows.map((other) => other.id));
			after();
			host.setStatus(forcedText(done, forced));
		}),
	);
}
