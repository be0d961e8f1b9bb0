/**
 * The page's row actions beyond reply/stop/archive/merge (api.ts): the row's diff and two attempts'
 * diff, its transcript, keep one attempt, remove a worktree (a refusal asks again before forcing, as
 * the TUI's `w`), rename, pin, raise a budget. Each calls the engine the TUI's key calls, and words its
 * answer with the view-model's text, so the page and the TUI say the same.
 */
import { parseAmount } from "../../../runner/life/budget.mjs";
import { isValidId } from "../../../runner/store/store-layout.mjs";
import { clearOthers, keepAttempt, planKeep } from "../../board/engine/keep-attempt.ts";
import type { BoardRow, BoardService } from "../../board/engine/types.ts";
import { budgetResultText } from "../../board/view-model/budget-words.ts";
import { readRowDiff } from "../../board/view-model/diff.ts";
import type { BoardFeed } from "../../board/view-model/feed.ts";
import { forcedText, keepQuestion, keptText, refusedOf } from "../../board/view-model/keep-text.ts";
import { clean, cleanBlock, liveTail } from "../../board/view-model/row-text.ts";
import { readRowReceipts } from "../../board/view-model/sent-receipts.ts";
import { readTranscript, withSent } from "../../board/view-model/transcript.ts";
import { HttpError, optBoolean, optString, readJson } from "./http-util.ts";
import type { IncomingMessage } from "node:http";

/** Lines of a diff the page gets; a longer one says how many more there were. */
const DIFF_LINES = 5000;

interface Deps {
	service: BoardService;
	feed: BoardFeed;
}

type Handler = (deps: Deps, req: IncomingMessage, id: string, query: URLSearchParams) => Promise<unknown>;

async function rowOf(service: BoardService, id: string): Promise<BoardRow> {
	const row = await service.get(id);
	if (!row) throw new HttpError(404, `no such row: ${id}`);
	return row;
}

function diffLines(lines: readonly string[]): { lines: string[]; more: number } {
	return {
		lines: lines.slice(0, DIFF_LINES).map((line) => cleanBlock(line).replace(/\n/g, " ")),
		more: Math.max(0, lines.length - DIFF_LINES),
	};
}

/** Row ids in a body field: each must be a row id. */
function ids(body: Record<string, unknown>, key: string): string[] {
	const value = body[key];
	if (!Array.isArray(value) || !value.every((id) => typeof id === "string" && isValidId(id)))
		throw new HttpError(400, `${key} must be a list of row ids`);
	return value as string[];
}

export const ROW_TOOLS_GET: Record<string, Handler> = {
	/** The row against its branch point, or (`?against=<id>`) two attempts' current trees, as `d` in the TUI. */
	diff: async ({ service }, _req, id, query) => {
		const against = query.get("against");
		if (against) {
			if (!isValidId(against)) throw new HttpError(400, "against: not a row id");
			const [a, b] = await Promise.all([rowOf(service, against), rowOf(service, id)]);
			return { title: `${label(a)} vs ${label(b)}`, ...diffLines(await service.compareDiff(against, id)) };
		}
		const row = await rowOf(service, id);
		if (!row.worktreePath) throw new HttpError(409, `${clean(row.name)} has no worktree: no diff`);
		return { title: clean(row.name), ...diffLines(await readRowDiff(row)) };
	},
	/** The session's current branch with every message the user sent marked, and the words streaming now. */
	transcript: async ({ service }, _req, id) => {
		const row = await rowOf(service, id);
		const { earlier, current } = readRowReceipts(service.storeDir, row.id, row.currentRunId);
		const entries = withSent(await readTranscript(row.sessionFile), earlier, current);
		return {
			name: clean(row.name) || row.id,
			state: row.state,
			entries,
			...(row.live?.text ? { liveText: liveTail(row.live.text) } : {}),
		};
	},
	"keep-plan": async ({ service }, _req, id) => {
		const plan = await planKeep(service, id);
		return keepQuestion(plan);
	},
};

function label(row: BoardRow): string {
	return row.attempt ? `#${row.attempt.index} ${row.id}` : row.id;
}

export const ROW_TOOLS_POST: Record<string, Handler> = {
	keep: async ({ service, feed }, _req, id) => {
		const row = await rowOf(service, id);
		const result = await keepAttempt(service, id, { commit: true });
		await feed.refresh([id, ...result.plan.others.map((other) => other.row.id)]);
		if (result.status === "conflict")
			return {
				status: "conflict",
				followUp: result.merge.followUp,
				message: `merge conflict in ${result.merge.files.map(clean).join(", ")}; nothing was changed. Send the row this follow-up, then keep it again.`,
			};
		const done = keptText(row, result);
		const refused = refusedOf(result);
		return {
			status: "kept",
			message: done,
			...(refused.question ? { refused: refused.rows.map((r) => r.id), question: refused.question } : {}),
		};
	},
	/** The second answer after a keep: the worktrees it left go, uncommitted work and all. */
	"keep-force": async ({ service, feed }, req) => {
		const body = await readJson(req, 16_384);
		const rows = await Promise.all(ids(body, "rows").map((other) => rowOf(service, other)));
		const forced = await clearOthers(service, rows, true);
		await feed.refresh(rows.map((row) => row.id));
		return { message: forcedText(optString(body, "done", 2000) ?? "kept", forced) };
	},
	/** As `w`: git refuses a worktree with changes; the page is then asked again, and `force` removes it. */
	"remove-worktree": async ({ service, feed }, req, id) => {
		const body = await readJson(req, 4096);
		const row = await rowOf(service, id);
		const force = optBoolean(body, "force");
		try {
			const { far } = await service.removeWorktree(id, { force });
			await feed.refresh([id]);
			return {
				status: "removed",
				message: `${force ? "force-removed" : "removed"} worktree of ${clean(row.name)}${far ? `; ${clean(far)}` : ""}`,
			};
		} catch (error) {
			if (force) throw error;
			const why = error instanceof Error ? error.message : String(error);
			return {
				status: "refused",
				question: `Force-remove the worktree, losing its changes? git: ${clean(why)}`,
			};
		}
	},
	rename: async ({ service, feed }, req, id) => {
		const body = await readJson(req, 4096);
		const name = (optString(body, "name", 200) ?? "").trim();
		if (!name) throw new HttpError(400, "type a name first");
		await service.rename(id, name);
		await feed.refresh([id]);
		return { message: `renamed ${id} to ${clean(name)}` };
	},
	pin: async ({ service, feed }, req, id) => {
		const body = await readJson(req, 4096);
		const pinned = optBoolean(body, "pinned");
		const row = await rowOf(service, id);
		await service.pin(id, pinned);
		await feed.refresh([id]);
		return { message: `${pinned ? "pinned" : "unpinned"} ${clean(row.name)}` };
	},
	/** As `/agent-board budget <id> <amount>`: a row its budget paused goes on. */
	budget: async ({ service, feed }, req, id) => {
		const body = await readJson(req, 4096);
		const text = optString(body, "amount", 100) ?? "";
		const amount = parseAmount(text);
		if (!amount) throw new HttpError(400, `not an amount: "${clean(text)}" (50k tokens, $2)`);
		if (!service.budget) throw new HttpError(409, "this board cannot set budgets");
		const result = await service.budget(id, amount);
		feed.put(result.row);
		return { message: budgetResultText(id, amount, result) };
	},
};
