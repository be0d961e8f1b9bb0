/**
 * The page's API: reads come from the shared feed (or the service for one row in full, an attempt set,
 * a merge plan); every change goes through the board service, the engine's own paths (inbox messages
 * and the row lock), exactly as the TUI's keys do. Responses carry words for people, made as the TUI
 * and the subcommands make them.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { MAX_MESSAGE_BYTES, REASON_CODES } from "../../../runner/life/reasons.mjs";
import { isValidId } from "../../../runner/store/store-layout.mjs";
import type { BoardRow, BoardService, ReplyResult } from "../../board/engine/types.ts";
import { mergeConflicts } from "../../board/engine/git/merge-preview.ts";
import { DELIVERY_TEXT } from "../../board/view-model/delivery-text.ts";
import type { BoardFeed } from "../../board/view-model/feed.ts";
import { planQuestion } from "../../board/view-model/merge-text.ts";
import { clean } from "../../board/view-model/row-text.ts";
import { dispatchForm, startDispatch } from "./dispatch-api.ts";
import type { EventHub } from "./event-hub.ts";
import { HttpError, optBoolean, optString, readJson, sendJson } from "./http-util.ts";
import { BOARD_GET } from "./board-api.ts";
import { pageAttempts, pageDetail, pagePlan } from "./row-json.ts";
import { ROW_TOOLS_GET, ROW_TOOLS_POST } from "./row-tools-api.ts";
import { searchApi } from "./search-api.ts";

export interface ApiDeps {
	service: BoardService;
	feed: BoardFeed;
	hub: EventHub;
	/** The dispatch form's cwd when none was remembered: where `serve` was run. */
	cwd: string;
	/** What /api/session tells the page (its CSRF token, where the server listens). */
	session(): Record<string, unknown>;
}

/** A reply body: the text (up to the engine's message limit) and a little JSON around it. */
const BODY_LIMIT = MAX_MESSAGE_BYTES * 2 + 4096;

function replyMessage(name: string, result: ReplyResult): string {
	const receipt = result.receipt;
	if (receipt?.status === "rejected") return `${name}: rejected: ${clean(receipt.reason ?? "no reason given")}`;
	return `${name}: ${DELIVERY_TEXT[result.delivery]}`;
}

/** The engine's refusals (a code of reasons.mjs) are the request's fault; anything else is ours. */
export function errorStatus(error: unknown): number {
	if (error instanceof HttpError) return error.status;
	const code = (error as { code?: unknown } | undefined)?.code;
	if (code === "no-such-row") return 404;
	if (typeof code === "string" && (REASON_CODES as readonly string[]).includes(code)) return 409;
	return 500;
}

async function requireRow(service: BoardService, id: string): Promise<BoardRow> {
	const row = await service.get(id);
	if (!row) throw new HttpError(404, `no such row: ${id}`);
	return row;
}

type Handler = (deps: ApiDeps, req: IncomingMessage, id: string, query: URLSearchParams) => Promise<unknown>;

/** Row routes: `/api/rows/<id>/<action>`, by method. */
const ROW_GET: Record<string, Handler> = {
	...ROW_TOOLS_GET,
	"": async ({ service, hub }, _req, id) => {
		const row = await requireRow(service, id);
		return pageDetail(row, hub.row(row).diff);
	},
	compare: async ({ service, hub }, _req, id) => pageAttempts(await service.compare(id), (row) => hub.row(row).diff),
	"merge-plan": async ({ service }, _req, id) => {
		const row = await requireRow(service, id);
		if (!row.worktreePath) throw new HttpError(409, `${clean(row.name)} has no worktree: nothing to merge`);
		const [planned, conflicts] = await Promise.all([
			service.merge(id, { dryRun: true }),
			mergeConflicts(row).catch(() => []),
		]);
		return {
			question: planQuestion(row, planned.plan, conflicts),
			plan: pagePlan(planned.plan),
			conflicts: conflicts.map(clean),
			commit: planned.plan.uncommitted.length > 0,
		};
	},
};

const ROW_POST: Record<string, Handler> = {
	...ROW_TOOLS_POST,
	reply: async ({ service, feed }, req, id) => {
		const body = await readJson(req, BODY_LIMIT);
		const text = optString(body, "text", MAX_MESSAGE_BYTES) ?? "";
		if (!text.trim()) throw new HttpError(400, "empty reply not sent");
		const result = await service.reply(id, text, optBoolean(body, "followUp") ? { followUp: true } : undefined);
		feed.put(result.row);
		return { message: replyMessage(clean(result.row.name), result), delivery: result.delivery };
	},
	stop: async ({ service, feed }, _req, id) => {
		const row = await service.stop(id);
		feed.put(row);
		return { message: `stopped ${clean(row.name)}: ${row.state}` };
	},
	archive: async ({ service, feed }, _req, id) => {
		await service.archive(id);
		await feed.refresh([id]);
		return { message: `archived ${id}` };
	},
	unarchive: async ({ service, feed }, _req, id) => {
		await service.unarchive(id);
		await feed.refresh([id]);
		return { message: `unarchived ${id}` };
	},
	viewed: async ({ service, feed }, _req, id) => {
		await service.markViewed(id);
		await feed.refresh([id]);
		return {};
	},
	merge: async ({ service, feed }, req, id) => {
		const body = await readJson(req, 4096);
		const row = await requireRow(service, id);
		const result = await service.merge(id, { commit: optBoolean(body, "commit") });
		await feed.refresh([id]);
		const name = clean(row.name);
		if (result.status === "conflict") {
			return {
				status: "conflict",
				files: result.files.map(clean),
				followUp: result.followUp,
				message: `merge conflict in ${result.files.map(clean).join(", ")}; the main checkout is unchanged. Send the row this follow-up, then merge again.`,
			};
		}
		if (result.status === "merged")
			return {
				status: "merged",
				message: `merged ${name} into ${clean(result.plan.into)}: ${result.commit.slice(0, 12)} (${result.fastForward ? "fast-forward" : "merge commit"})`,
			};
		return { status: result.status, message: `planned the merge of ${name}` };
	},
};

/** Handles `/api/...`; the caller has checked the cookie, Host, Origin and CSRF token. */
export async function handleApi(
	deps: ApiDeps,
	req: IncomingMessage,
	res: ServerResponse,
	path: string,
	query: URLSearchParams,
): Promise<void> {
	const method = req.method ?? "GET";
	const get = method === "GET" || method === "HEAD";
	try {
		if (path === "/api/events" && get) return deps.hub.add(res);
		if (path === "/api/session" && get) return sendJson(res, 200, deps.session());
		if (path === "/api/rows" && get)
			return sendJson(res, 200, { rows: deps.hub.rows(query.get("archived") === "1") });
		if (path === "/api/search" && get)
			return sendJson(res, 200, await searchApi(deps.service.storeDir, query.get("q") ?? ""));
		if (path === "/api/dispatch" && get)
			return sendJson(res, 200, await dispatchForm(deps.service, deps.feed, deps.cwd));
		if (path === "/api/dispatch" && method === "POST")
			return sendJson(res, 200, await startDispatch(deps.service, deps.feed, await readJson(req, BODY_LIMIT)));
		const board = BOARD_GET[path];
		if (board && get) return sendJson(res, 200, await board(deps, query));
		const match = /^\/api\/rows\/([^/]+)(?:\/([a-z-]+))?$/.exec(path);
		if (match) {
			const id = decodeURIComponent(match[1] ?? "");
			if (!isValidId(id)) throw new HttpError(400, "not a row id");
			const handler = (get ? ROW_GET : method === "POST" ? ROW_POST : {})[match[2] ?? ""];
			if (handler) return sendJson(res, 200, await handler(deps, req, id, query));
		}
		sendJson(res, 404, { error: `no such endpoint: ${method} ${path}` });
	} catch (error) {
		if (res.headersSent) return void res.end();
		sendJson(res, errorStatus(error), { error: error instanceof Error ? error.message : String(error) });
	}
}
