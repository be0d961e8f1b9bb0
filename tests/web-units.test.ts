/**
 * The web server's pure parts: serve's arguments, who may talk to the server (cookie, Host, Origin,
 * CSRF), what a non-loopback bind says, a row as the page gets it, where pi's packages are found, and
 * the server's record in the store (one live owner; a dead one's record is broken, never signalled).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { processStartTime } from "../runner/store/proc.mjs";
import type { BoardRow } from "../src/board/engine/types.ts";
import { baseUrl, exposureText, isLoopback, loginUrl } from "../src/web/addresses.ts";
import { parseServeArgs } from "../src/web/serve-args.ts";
import { checkRequest, cookieValue, csrfFor, hostAllowed, newToken } from "../src/web/server/auth.ts";
import { packageDir, piModules, piRootFromScript, resolveImport } from "../src/web/server/pi-modules.mjs";
import { pageRow } from "../src/web/server/row-json.ts";
import {
	claimRecord,
	dropRecord,
	liveRecord,
	readToken,
	recordPath,
	tokenPath,
	writeToken,
} from "../src/web/web-files.ts";

// Not through the pi harness: this file starts no pi and stays in the unit tier.
const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const PI_CLI = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});
function store(): string {
	const dir = mkdtempSync(join(tmpdir(), "pab-web-"));
	dirs.push(dir);
	return dir;
}

describe("serve arguments", () => {
	it("parses start, stop, status and rotate, and refuses the rest with a reason", () => {
		expect(parseServeArgs("", {})).toEqual({ ok: true, serve: { action: "start", port: 7878, host: "127.0.0.1" } });
		expect(parseServeArgs("", { AGENT_BOARD_WEB_PORT: "9100" })).toEqual({
			ok: true,
			serve: { action: "start", port: 9100, host: "127.0.0.1" },
		});
		expect(parseServeArgs("--port 0 --host 0.0.0.0")).toEqual({
			ok: true,
			serve: { action: "start", port: 0, host: "0.0.0.0" },
		});
		expect(parseServeArgs("--port=9000 --host=[::1]", { AGENT_BOARD_WEB_PORT: "9100" })).toEqual({
			ok: true,
			serve: { action: "start", port: 9000, host: "::1" },
		});
		expect(parseServeArgs("--stop")).toEqual({ ok: true, serve: { action: "stop" } });
		expect(parseServeArgs("--status")).toEqual({ ok: true, serve: { action: "status" } });
		expect(parseServeArgs("--rotate")).toEqual({ ok: true, serve: { action: "rotate" } });
		expect(parseServeArgs("--stop --port 1")).toMatchObject({ ok: false, error: "--stop takes no other argument" });
		expect(parseServeArgs("--port 70000")).toMatchObject({ ok: false });
		expect(parseServeArgs("--port")).toMatchObject({ ok: false });
		expect(parseServeArgs("--host http://x/")).toMatchObject({ ok: false });
		expect(parseServeArgs("--tls")).toMatchObject({ ok: false, error: 'unknown serve argument "--tls"' });
	});
});

describe("who may talk to the server", () => {
	const token = newToken();
	const cookie = `other=1; agent_board_web=${token}`;
	const host = "127.0.0.1:7878";
	const origin = "http://127.0.0.1:7878";
	const csrf = csrfFor(token);

	it("makes long random tokens and a CSRF token that changes with them", () => {
		expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
		expect(newToken()).not.toBe(token);
		expect(csrfFor(token)).not.toBe(csrfFor(newToken()));
		expect(cookieValue(cookie)).toBe(token);
	});

	it("refuses a request without the cookie (401), for a rebound name (403), from another origin (403), a change without the CSRF token (403)", () => {
		expect(checkRequest({ method: "GET", host }, token, "127.0.0.1")).toMatchObject({ ok: false, status: 401 });
		expect(checkRequest({ method: "GET", host, cookie: "agent_board_web=wrong" }, token, "127.0.0.1")).toMatchObject({
			ok: false,
			status: 401,
		});
		expect(checkRequest({ method: "GET", host, cookie }, token, "127.0.0.1")).toEqual({ ok: true });
		expect(checkRequest({ method: "GET", host: "evil.example:7878", cookie }, token, "127.0.0.1")).toMatchObject({
			ok: false,
			status: 403,
		});
		expect(
			checkRequest({ method: "GET", host, origin: "http://evil.example", cookie }, token, "127.0.0.1"),
		).toMatchObject({ ok: false, status: 403 });
		expect(checkRequest({ method: "POST", host, origin, cookie }, token, "127.0.0.1")).toMatchObject({
			ok: false,
			status: 403,
			reason: "wrong CSRF token",
		});
		expect(checkRequest({ method: "POST", host, cookie, csrf }, token, "127.0.0.1")).toMatchObject({
			ok: false,
			status: 403,
			reason: "no Origin",
		});
		expect(
			checkRequest({ method: "POST", host, origin: "http://localhost:7878", cookie, csrf }, token, "127.0.0.1"),
		).toMatchObject({ ok: false, status: 403 });
		expect(checkRequest({ method: "POST", host, origin, cookie, csrf }, token, "127.0.0.1")).toEqual({ ok: true });
	});

	it("takes IP addresses, localhost and the name it listens on as Host, never another name", () => {
		for (const ok of ["127.0.0.1:7878", "localhost:9000", "[::1]:7878", "192.168.1.20:7878", "10.0.0.2"])
			expect(hostAllowed(ok, "127.0.0.1"), ok).toBe(true);
		for (const bad of [
			undefined,
			"",
			"attacker.example:7878",
			"127.0.0.1.nip.io:7878",
			"localhost.attacker.example",
			"a b",
		])
			expect(hostAllowed(bad, "127.0.0.1"), String(bad)).toBe(false);
		expect(hostAllowed("devbox.lan:7878", "devbox.lan")).toBe(true);
	});
});

describe("where it listens", () => {
	it("says nothing for loopback and what is exposed otherwise; URLs carry the token only in the login URL", () => {
		expect(isLoopback("127.0.0.1")).toBe(true);
		expect(isLoopback("::1")).toBe(true);
		expect(isLoopback("0.0.0.0")).toBe(false);
		expect(exposureText("127.0.0.1", 7878)).toBe("");
		expect(exposureText("0.0.0.0", 7878)).toContain("every network this machine is on");
		expect(exposureText("192.168.1.20", 7878)).toContain("plain http");
		expect(baseUrl("0.0.0.0", 7878, ["192.168.1.20"])).toBe("http://192.168.1.20:7878");
		expect(baseUrl("::1", 7878)).toBe("http://[::1]:7878");
		expect(loginUrl("http://127.0.0.1:7878", "a-b_c")).toBe("http://127.0.0.1:7878/login?token=a-b_c");
	});
});

describe("a row as the page gets it", () => {
	it("keeps what the page shows and passes worker text through the sanitiser", () => {
		const row = {
			id: "r1",
			name: "fix \x1b[31mthe\x1b[0m parser\u202e",
			cwd: "/w",
			sessionFile: "/s",
			createdAt: 1,
			updatedAt: 2,
			pinned: false,
			archived: false,
			worktreeMode: "none",
			state: "needs_input",
			alive: true,
			summary: "asks",
			question: "Which <b>db</b>?\x07",
			questionOptions: ["<img src=x onerror=alert(1)>", "sqlite"],
			lastActivityAt: 5,
			recentEvents: [],
			live: { text: "hello world", tool: { name: "ask_user", detail: "Which db?", startedAt: 4 } },
		} satisfies BoardRow;
		const page = pageRow(row);
		expect(page).toMatchObject({
			id: "r1",
			name: "fix the parser\ufffd",
			group: 1,
			question: "Which <b>db</b>?␇",
			options: ["<img src=x onerror=alert(1)>", "sqlite"],
			liveText: "hello world",
			target: "local",
			unread: true,
		});
		expect(page.live?.tool).toEqual({ name: "ask_user", detail: "Which db?", startedAt: 4 });
		expect(pageRow({ ...row, pinned: true }).group).toBe(0);
	});
});

describe("pi's packages for the server", () => {
	it("finds pi's package from its script and resolves its packages as ESM imports", () => {
		const root = piRootFromScript(PI_CLI);
		expect(root).toBe(join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent"));
		expect(piRootFromScript("/nonexistent/cli.js")).toBeUndefined();
		expect(resolveImport(root ?? "", "typebox/compile")).toBe(
			join(REPO_ROOT, "node_modules/typebox/build/compile/index.mjs"),
		);
		expect(resolveImport(root ?? "", "@earendil-works/pi-ai")).toBe(
			join(REPO_ROOT, "node_modules/@earendil-works/pi-ai/dist/index.js"),
		);
		expect(packageDir("/", "no-such-package")).toBeUndefined();
		const modules = piModules(root, "/nonexistent");
		expect(typeof modules.createJiti).toBe("function");
		expect(modules.alias["@earendil-works/pi-coding-agent"]).toBe(join(root ?? "", "dist/bundle/index.js"));
		expect(() => piModules(undefined, "/nonexistent")).toThrow(/no pi install with jiti/);
	});
});

describe("the server's record", () => {
	it("has one live owner, breaks a dead one's record, and names its token's server", () => {
		const dir = store();
		const start = processStartTime(process.pid) ?? "";
		const me = { pid: process.pid, start, host: "127.0.0.1", port: 7878, startedAt: 1 };
		// A record left by a process that is gone (its start time does not match) is broken, not trusted.
		expect(claimRecord(dir, { ...me, start: "1" })).toBeUndefined();
		expect(liveRecord(dir)).toBeUndefined();
		expect(claimRecord(dir, me)).toBeUndefined();
		expect(liveRecord(dir)).toEqual(me);
		// A live owner keeps it: a second server is told who runs.
		expect(claimRecord(dir, { ...me, port: 9999 })).toEqual(me);
		expect(statSync(recordPath(dir)).mode & 0o777).toBe(0o600);
		writeToken(dir, process.pid, "t".repeat(43));
		expect(statSync(tokenPath(dir)).mode & 0o777).toBe(0o600);
		expect(readToken(dir, process.pid)).toBe("t".repeat(43));
		expect(readToken(dir, process.pid + 1)).toBeUndefined();
		expect(JSON.parse(readFileSync(recordPath(dir), "utf8")).port).toBe(7878);
		dropRecord(dir, process.pid);
		expect(liveRecord(dir)).toBeUndefined();
		expect(readToken(dir, process.pid)).toBeUndefined();
	});
});
