/**
 * One request: the login URL sets the cookie; everything else must pass the checks of auth.ts first
 * (401 without the cookie, 403 for a wrong Host, Origin or CSRF token), then goes to the API or the
 * page's files. Nothing here knows rows: that is api.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type ApiDeps, handleApi } from "./api.ts";
import { checkRequest, cookieValue, CSRF_HEADER, hostAllowed, loginCookie, originMatches, sameSecret } from "./auth.ts";
import { send, sendJson } from "./http-util.ts";
import type { StaticFile } from "./static-files.ts";

export interface AppOptions {
	/** The login token now (it changes on rotation). */
	token(): string;
	/** The address the server listens on (`--host`): a name given there is an allowed Host. */
	bindHost: string;
	page: Map<string, StaticFile>;
	api: ApiDeps;
}

const NOT_LOGGED_IN =
	"Not logged in. Open the login URL that `/agent-board serve` printed (or `/agent-board serve --rotate` for a new one).\n";

/** The login page moves on with a meta refresh (no script), so the SameSite=Strict cookie goes with the next request. */
const loggedIn = (to: string) =>
	`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${to}"><title>Agent board</title></head><body><p>Logged in. <a href="${to}">Open the board</a>.</p></body></html>\n`;

/**
 * A row's link (a notifier's, the report's) opened without the cookie: the row is remembered for the
 * login, which then opens it. Only a row id and the answer flag go in, and back out as `/?row=...`.
 */
const NEXT_COOKIE = "agent_board_next";
const ROW_ID = /^[A-Za-z0-9_-]{1,80}$/;

function nextCookie(url: URL): string | undefined {
	const row = url.searchParams.get("row");
	if (url.pathname !== "/" || !row || !ROW_ID.test(row)) return undefined;
	const next = `${row}${url.searchParams.get("answer") === "1" ? ".answer" : ""}`;
	return `${NEXT_COOKIE}=${next}; Path=/login; HttpOnly; SameSite=Strict; Max-Age=3600`;
}

function nextPage(cookie: string | undefined): string {
	const [row, answer] = (cookieValue(cookie, NEXT_COOKIE) ?? "").split(".");
	if (!row || !ROW_ID.test(row)) return "/";
	return `/?row=${row}${answer === "answer" ? "&answer=1" : ""}`;
}

function header(req: IncomingMessage, name: string): string | undefined {
	const value = req.headers[name];
	return Array.isArray(value) ? value[0] : value;
}

function refuse(res: ServerResponse, path: string, status: number, reason: string, next?: string): void {
	if (path.startsWith("/api/")) {
		sendJson(res, status, { error: status === 401 ? NOT_LOGGED_IN.trim() : `refused: ${reason}` });
		return;
	}
	if (status === 401 && next) {
		send(res, status, `${NOT_LOGGED_IN}Then this link opens its row.\n`, "text/plain; charset=utf-8", {
			"set-cookie": next,
		});
		return;
	}
	send(res, status, status === 401 ? NOT_LOGGED_IN : `Refused: ${reason}.\n`, "text/plain; charset=utf-8");
}

export function createApp(options: AppOptions): (req: IncomingMessage, res: ServerResponse) => void {
	return (req, res) => {
		let url: URL;
		try {
			url = new URL(req.url ?? "/", "http://board.invalid");
		} catch {
			return send(res, 400, "Bad request.\n", "text/plain; charset=utf-8");
		}
		const path = url.pathname;
		const method = req.method ?? "GET";
		const host = header(req, "host");
		const origin = header(req, "origin");
		if (path === "/login" && method === "GET") {
			if (!hostAllowed(host, options.bindHost)) return refuse(res, path, 403, "wrong Host");
			if (origin !== undefined && !originMatches(origin, host)) return refuse(res, path, 403, "wrong Origin");
			if (!sameSecret(url.searchParams.get("token") ?? undefined, options.token()))
				return refuse(res, path, 401, "wrong token");
			return send(res, 200, loggedIn(nextPage(header(req, "cookie"))), "text/html; charset=utf-8", {
				"set-cookie": [
					loginCookie(options.token()),
					`${NEXT_COOKIE}=; Path=/login; HttpOnly; SameSite=Strict; Max-Age=0`,
				],
			});
		}
		const verdict = checkRequest(
			{ method, host, origin, cookie: header(req, "cookie"), csrf: header(req, CSRF_HEADER) },
			options.token(),
			options.bindHost,
		);
		if (!verdict.ok)
			return refuse(res, path, verdict.status, verdict.reason, method === "GET" ? nextCookie(url) : undefined);
		if (path.startsWith("/api/")) {
			void handleApi(options.api, req, res, path, url.searchParams);
			return;
		}
		const file = options.page.get(path);
		if (!file) return send(res, 404, "Not found.\n", "text/plain; charset=utf-8");
		if (method !== "GET" && method !== "HEAD")
			return send(res, 405, "Method not allowed.\n", "text/plain; charset=utf-8", { allow: "GET, HEAD" });
		send(res, 200, method === "HEAD" ? "" : file.body, file.type, { "cache-control": "no-cache" });
	};
}
