/**
 * The web server as installed and as a user reaches it, without a browser: started by a pi that loads
 * the package from a copy under node_modules with no pi packages beside it (as `pi install` leaves it),
 * the engine loaded through pi's jiti; every endpoint refuses a request without the cookie (401), for a
 * rebound Host or from another Origin (403), a change without the CSRF token (403), and changes nothing
 * then; a rotation logs the old cookie out. And the switch in the board's settings (`S`).
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isAlive } from "../runner/store/proc.mjs";
import { SettingsView } from "../src/board/dashboard/settings-view.ts";
import { liveRecord, logPath, recordPath, tokenPath, webDir } from "../src/web/web-files.ts";
import { WebLoginView } from "../src/board/dashboard/web-setting.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { harnessPerTest } from "../test-support/dashboard-harness.ts";
import { KEY, settle } from "../test-support/fake-board-service.ts";
import { createTestAgent, PI_CLI, REPO_ROOT, runPi, waitFor, type TestAgent } from "../test-support/pi-harness.ts";
import { rawRequest } from "../test-support/web-server.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

/** The package as `pi install` leaves it: under a node_modules, with its own dependencies and none of pi's. */
function installedCopy(agent: TestAgent): string {
	const dir = join(agent.agentDir, "npm", "node_modules", "pi-agent-board");
	for (const part of ["package.json", "src", "runner"])
		cpSync(join(REPO_ROOT, part), join(dir, part), { recursive: true });
	mkdirSync(join(dir, "node_modules"), { recursive: true });
	cpSync(join(REPO_ROOT, "node_modules", "uqr"), join(dir, "node_modules", "uqr"), { recursive: true });
	return dir;
}

const LOGIN = /http:\/\/\S+\/login\?token=([A-Za-z0-9_-]+)/;

describe("the web server, installed", () => {
	it("loads the engine through pi's jiti from an installed copy and refuses every request it should", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Done from the web." }] } });
		agents.push(agent);
		const copy = installedCopy(agent);
		const store = join(agent.root, "store");
		const pi = (command: string) =>
			runPi(agent, {
				withExtension: false,
				args: ["-e", join(copy, "src", "index.ts"), "-p", `/agent-board ${command}`],
				env: { AGENT_BOARD_DIR: store },
				timeoutMs: 120_000,
			});
		const started = await pi("serve --port 0");
		expect(started.code, started.stderr).toBe(0);
		const login = LOGIN.exec(started.stdout);
		expect(login, started.stdout).toBeTruthy();
		expect(started.stdout).toContain("ssh -L");
		expect(started.stdout).toMatch(/[█▀▄]{20}/);
		const token = login?.[1] ?? "";
		const record = liveRecord(store);
		if (!record) throw new Error("no server record");
		// The server runs the copy's engine with the packages of the pi that started it, and lives on after that pi exited.
		expect(readFileSync(logPath(store), "utf8")).toContain(
			`loading the board engine from ${copy} with pi's packages from ${join(REPO_ROOT, "node_modules", "@earendil-works", "pi-coding-agent")}`,
		);
		expect(isAlive(record.pid, record.start)).toBe(true);
		expect(statSync(webDir(store)).mode & 0o777).toBe(0o700);
		for (const file of [recordPath(store), tokenPath(store), logPath(store)])
			expect(statSync(file).mode & 0o777, file).toBe(0o600);
		expect(readFileSync(logPath(store), "utf8")).not.toContain(token);

		const port = record.port;
		const origin = `http://127.0.0.1:${port}`;
		const logged = await rawRequest(port, "GET", `/login?token=${token}`);
		expect(logged.status).toBe(200);
		const setCookie = String(logged.headers["set-cookie"]);
		expect(setCookie).toMatch(/^agent_board_web=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict/);
		expect(logged.body).toContain('content="0;url=/"');
		const cookie = setCookie.split(";")[0] ?? "";
		const session = await rawRequest(port, "GET", "/api/session", { cookie });
		expect(session.status).toBe(200);
		const csrf = String(JSON.parse(session.body).csrf);
		const good = { cookie, origin, "x-csrf-token": csrf, "content-type": "application/json" };

		// A real dispatch through the API: the server starts the worker with the pi that started it.
		const dispatched = await rawRequest(
			port,
			"POST",
			"/api/dispatch",
			good,
			JSON.stringify({ prompt: "web dispatch", cwd: agent.cwd }),
		);
		expect(dispatched.status, dispatched.body).toBe(200);
		const id = String(JSON.parse(dispatched.body).rows[0]);
		const board = boardFor(agent);
		expect((await waitDone(board, id)).latestAssistant).toBe("Done from the web.");

		const endpoints: [string, string][] = [
			...[
				"/",
				"/index.html",
				"/app.js",
				"/style.css",
				"/sw.js",
				"/manifest.webmanifest",
				"/icon.svg",
				"/no-such-file",
				"/api/session",
				"/api/events",
				"/api/rows",
				"/api/rows?archived=1",
				`/api/rows/${id}`,
				`/api/rows/${id}/compare`,
				`/api/rows/${id}/merge-plan`,
				"/api/dispatch",
			].map((path): [string, string] => ["GET", path]),
			...[
				"/api/dispatch",
				`/api/rows/${id}/reply`,
				`/api/rows/${id}/stop`,
				`/api/rows/${id}/archive`,
				`/api/rows/${id}/unarchive`,
				`/api/rows/${id}/viewed`,
				`/api/rows/${id}/merge`,
			].map((path): [string, string] => ["POST", path]),
		];
		const body = JSON.stringify({ text: "hi", prompt: "should not start", cwd: agent.cwd });
		const statuses = async (headers: Record<string, string>) =>
			Promise.all(
				endpoints.map(
					async ([method, path]) =>
						`${method} ${path} ${(await rawRequest(port, method, path, headers, method === "POST" ? body : undefined)).status}`,
				),
			);
		const all = (status: number) => endpoints.map(([method, path]) => `${method} ${path} ${status}`);
		const { cookie: _drop, ...noCookie } = good;
		expect(await statuses(noCookie)).toEqual(all(401));
		expect(await statuses({ ...good, cookie: "agent_board_web=not-the-token" })).toEqual(all(401));
		expect(await statuses({ ...good, host: `attacker.example:${port}` })).toEqual(all(403));
		expect(await statuses({ ...good, origin: "http://attacker.example" })).toEqual(all(403));
		const posts = endpoints.filter(([method]) => method === "POST");
		for (const [method, path] of posts) {
			expect((await rawRequest(port, method, path, { ...good, "x-csrf-token": "" }, body)).status, path).toBe(403);
			expect(
				(await rawRequest(port, method, path, { ...good, "x-csrf-token": "x".repeat(43) }, body)).status,
				path,
			).toBe(403);
			const { origin: _o, ...noOrigin } = good;
			expect((await rawRequest(port, method, path, noOrigin, body)).status, path).toBe(403);
		}
		expect((await rawRequest(port, "GET", "/login?token=wrong")).status).toBe(401);
		expect((await rawRequest(port, "GET", "/login")).status).toBe(401);
		expect(
			(await rawRequest(port, "GET", `/login?token=${token}`, { host: `attacker.example:${port}` })).status,
		).toBe(403);
		// Nothing the refused requests asked for happened.
		const after = await board.get(id);
		expect(after).toMatchObject({ archived: false, state: "completed" });
		expect((await board.list()).map((row) => row.id)).toEqual([id]);

		// What a good request gets: the CSP (no inline script, Trusted Types) on every response.
		const page = await rawRequest(port, "GET", "/", { cookie });
		expect(page.status).toBe(200);
		expect(String(page.headers["content-security-policy"])).toContain("script-src 'self'; style-src 'self'");
		expect(String(page.headers["content-security-policy"])).toContain("require-trusted-types-for 'script'");
		expect(String((await rawRequest(port, "GET", "/")).headers["content-security-policy"])).toContain(
			"default-src 'none'",
		);
		expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+=|\sstyle=/i);
		for (const name of readdirSync(join(REPO_ROOT, "src", "web", "page")).filter((file) => file.endsWith(".js"))) {
			expect(readFileSync(join(REPO_ROOT, "src", "web", "page", name), "utf8"), name).not.toMatch(
				/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/,
			);
		}

		// Rotation: the old cookie is refused at once, the new login works.
		const rotated = await pi("serve --rotate");
		const next = LOGIN.exec(rotated.stdout)?.[1];
		expect(next).toBeTruthy();
		expect(next).not.toBe(token);
		expect((await rawRequest(port, "GET", "/api/session", { cookie })).status).toBe(401);
		expect((await rawRequest(port, "GET", `/login?token=${next}`)).status).toBe(200);

		const stopped = await pi("serve --stop");
		expect(stopped.stdout).toContain(`stopped (pid ${record.pid})`);
		expect(isAlive(record.pid, record.start)).toBe(false);
		expect(liveRecord(store)).toBeUndefined();
		expect((await pi("serve --status")).stdout).toContain("not running");
	}, 240_000);
});

describe("the switch in the board's settings", () => {
	const harness = harnessPerTest();

	it("on starts the server and shows its one-time login; off stops it", async () => {
		const agent = createTestAgent();
		agents.push(agent);
		const store = join(agent.root, "store");
		mkdirSync(store, { mode: 0o700 });
		// The server's workers and its port, as a user's pi would give them.
		process.env.AGENT_BOARD_PI = JSON.stringify([process.execPath, PI_CLI]);
		process.env.AGENT_BOARD_WEB_PORT = "0";
		process.env.PI_CODING_AGENT_DIR = agent.agentDir;
		try {
			const h = await harness([], { storeDir: store });
			await h.press("S");
			expect(h.top()).toBeInstanceOf(SettingsView);
			expect(h.screen()).toMatch(/the board in a browser \(web server\)\s+off/);
			await h.press(KEY.down, KEY.down, KEY.down, KEY.down, KEY.enter);
			await waitFor(
				async () => {
					await settle();
					return h.top() instanceof WebLoginView;
				},
				"the login view",
				60_000,
			);
			expect(h.screen()).toMatch(/login\?token=/);
			expect(h.screen()).toMatch(/[█▀▄]{20}/);
			const record = liveRecord(store);
			expect(record && isAlive(record.pid, record.start)).toBe(true);
			await h.press(KEY.esc);
			expect(h.top()).toBeInstanceOf(SettingsView);
			expect(h.screen()).toMatch(/the board in a browser \(web server\)\s+on/);
			await h.press(KEY.enter);
			// The status line says it once the server is gone.
			await waitFor(
				async () => {
					await settle();
					return h.screen().includes(`agent-board web: stopped (pid ${record?.pid})`);
				},
				"the server to stop",
				30_000,
			);
			expect(record && isAlive(record.pid, record.start)).toBe(false);
			expect(liveRecord(store)).toBeUndefined();
		} finally {
			delete process.env.AGENT_BOARD_PI;
			delete process.env.AGENT_BOARD_WEB_PORT;
			delete process.env.PI_CODING_AGENT_DIR;
		}
	}, 120_000);
});
