/**
 * Hardening without pi: sanitising, shape checks on every store file, symlinks and FIFOs in the
 * store, the store guard, half-row cleanup and prefs permissions.
 */
import { execFileSync } from "node:child_process";
import {
	chmodSync,
	chownSync,
	existsSync,
	lstatSync,
	mkdirSync,
	readFileSync,
	readdirSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { BoardFeed } from "../src/board/view-model/feed.ts";
import { createBoardService } from "../src/board/engine/service.ts";
import { sanitizeText } from "../src/board/engine/sanitize.ts";
import { checkShape, MetaSchema } from "../src/board/engine/schemas.ts";
import { FileCache, readProcess, readProcessRecord, readSlot, readStatus } from "../src/board/engine/store.ts";
import { fsErrorMessage, guardStore, removeHalfRow } from "../src/board/engine/store-guard.ts";
import { loadPrefs, PREFS_FILE, savePrefs } from "../src/board/view-model/prefs.ts";
import { formatDetail, formatTable } from "../src/board/subcommands/table.ts";
import { TERMINAL_CONTROL, tempStores, writeRow } from "../test-support/hardening-fixtures.ts";
import { notRoot, requires } from "../test-support/requires.ts";
import { boardOn } from "../test-support/board-on.ts";

const store = tempStores();

const ESC = "\x1b";
const BEL = "\x07";
const HOSTILE = [
	`${ESC}]52;c;ZWNobyBwd25lZA==${BEL}`, // OSC 52: write the clipboard
	`${ESC}]0;owned title${ESC}\\`, // OSC 0: window title, ST-terminated
	`${ESC}[2J${ESC}[H`, // clear screen, cursor home
	`${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\`, // OSC 8 hyperlink
	`${ESC}P1$qm${ESC}\\`, // DCS
	`${ESC}_apc payload${ESC}\\`, // APC
	"\x9b31m\x9d0;c1 title\x9c", // 8-bit CSI and OSC
	"\u202eevil\u202c \u2066iso\u2069", // bidi override and isolate
	"bell\x07 nul\x00 bs\x08 del\x7f cr\rover",
].join(" | ");

describe("sanitizeText", () => {
	it("removes escape sequences and makes every other control visible, keeping the words", () => {
		const out = sanitizeText(HOSTILE);
		expect(out).not.toMatch(TERMINAL_CONTROL);
		expect(out).not.toMatch(/[\u202a-\u202e\u2066-\u2069\n\r]/);
		for (const word of ["click", "evil", "iso", "bell", "nul", "bs", "del", "over"]) expect(out).toContain(word);
		expect(out).not.toContain("ZWNobyBwd25lZA");
		expect(out).not.toContain("owned title");
		expect(out).toContain("\u2407"); // the lone BEL is shown as a control picture
		expect(sanitizeText(out)).toBe(out);
	});

	it("keeps lines only when multiline, turns tabs into spaces, leaves plain text untouched", () => {
		expect(sanitizeText("a\tb\nc\r\nd")).toBe("a b c d");
		expect(sanitizeText("a\tb\nc\r\nd\u2028e", { multiline: true })).toBe("a    b\nc\nd\ne");
		const plain = "Plain text, unicode \u00e9\u6f22\u{1f680}, quotes \"'`";
		expect(sanitizeText(plain)).toBe(plain);
		// An unterminated sequence loses its ESC: the rest is inert text.
		expect(sanitizeText(`${ESC}]52;c;abc`)).not.toMatch(TERMINAL_CONTROL);
		expect(sanitizeText(42 as unknown as string)).toBe("");
	});
});

describe("store shapes", () => {
	it("turns each wrong-typed field into an error row naming the file and field, and rewrites nothing", async () => {
		const { store: dir, paths } = store();
		const cases: Record<
			string,
			{ meta?: Record<string, unknown>; status?: Record<string, unknown>; reason: string }
		> = {
			"name-42": { meta: { name: 42 }, reason: "meta.json: /name must be string" },
			"archived-str": { meta: { archived: "yes" }, reason: "meta.json: /archived must be boolean" },
			"thinking-bad": {
				meta: { thinking: "max" },
				reason: "meta.json: /thinking must be equal to one of the allowed values",
			},
			"id-other": { meta: { id: "someone-else" }, reason: "meta.json: /id is" },
			"meta-array": { meta: { currentRunId: ["x"] }, reason: "meta.json: /currentRunId must be string" },
			"summary-42": { status: { summary: 42 }, reason: "status.json: /summary must be string" },
			"usage-x": { status: { usage: "x" }, reason: "status.json: /usage must be object" },
			"events-1": { status: { recentEvents: [1] }, reason: "status.json: /recentEvents/0 must be object" },
			"question-42": {
				status: { state: "needs_input", question: 42 },
				reason: "status.json: /question must be string",
			},
			"state-bogus": {
				status: { state: "bogus" },
				reason: "status.json: /state must be equal to one of the allowed values (queued, working",
			},
			"options-num": { status: { questionOptions: [1] }, reason: "status.json: /questionOptions/0 must be string" },
			"live-tool": { status: { live: { tool: { name: 1 } } }, reason: "status.json: /live/tool" },
			"receipt-bad": {
				status: { receipts: [{ id: "m", status: "lost", at: 1, preview: "" }] },
				reason: "status.json: /receipts/0/status",
			},
			"receipt-code": {
				status: { receipts: [{ id: "m", status: "rejected", code: "later", at: 1, preview: "" }] },
				reason: "status.json: /receipts/0/code",
			},
			"settled-gone": {
				status: { settled: undefined },
				reason: "status.json: / must have required properties settled",
			},
			"attempt-str": { meta: { attempt: "2 of 3" }, reason: "meta.json: /attempt must be object" },
			"attempt-index": {
				meta: { attempt: { setId: "set-1", index: "1", count: 2 } },
				reason: "meta.json: /attempt/index must be integer",
			},
			"merged-commit": {
				meta: { merged: { at: 1, commit: 5, into: "main" } },
				reason: "meta.json: /merged/commit must be string",
			},
		};
		const before = new Map<string, string>();
		for (const [id, spec] of Object.entries(cases)) {
			const row = writeRow(paths, id, { metaPatch: spec.meta, statusPatch: spec.status });
			before.set(id, readFileSync(paths.meta(id), "utf8") + readFileSync(join(row.runDir, "status.json"), "utf8"));
		}
		writeRow(paths, "good-row", {
			statusPatch: {
				live: {
					text: "hi",
					tool: { name: "bash", detail: "ls", startedAt: 1 },
					waitingSince: 2,
					retry: { attempt: 1, max: 3, reason: "429", at: 3 },
				},
				model: "faux/faux-1",
				receipts: [{ id: "m1", status: "delivered", as: "steer", at: 4, preview: "go" }],
				parked: false,
				somethingNew: { from: "a newer runner" },
			},
		});
		const board = createBoardService({ storeDir: dir, piCommand: ["pi"] });
		const rows = new Map((await board.list()).map((row) => [row.id, row]));
		expect(rows.get("good-row")?.state).toBe("completed");
		expect(rows.get("good-row")?.modelUsed).toBe("faux/faux-1");
		expect(rows.get("good-row")?.receipts?.[0]?.as).toBe("steer");
		for (const [id, spec] of Object.entries(cases)) {
			const row = rows.get(id);
			expect(row?.state, id).toBe("error");
			expect(row?.error, id).toContain(spec.reason);
			const runDir = join(paths.runs(id), `run-${id}`);
			expect(readFileSync(paths.meta(id), "utf8") + readFileSync(join(runDir, "status.json"), "utf8"), id).toBe(
				before.get(id),
			);
		}
		// The table and detail print every row, error rows included.
		const table = formatTable([...rows.values()], Date.now());
		for (const id of Object.keys(cases)) expect(table).toContain(id);
		expect(formatDetail(rows.get("state-bogus")!, Date.now())).toContain("/state must be equal to one of");
	});

	it("reads process records and slot files strictly: no start time, pid 1, empty or garbage is never a live owner", () => {
		const { root } = store();
		const at = (name: string, text: string) => {
			writeFileSync(join(root, name), text);
			return join(root, name);
		};
		const kill = vi.spyOn(process, "kill");
		try {
			expect(readProcess(at("pid1.json", '{"pid":1}'))).toBeUndefined();
			expect(readProcess(at("pid1s.json", '{"pid":1,"start":"1"}'))).toBeUndefined();
			expect(readProcess(at("neg.json", '{"pid":-1,"start":"1"}'))).toBeUndefined();
			expect(readProcess(at("float.json", '{"pid":2.5,"start":"1"}'))).toBeUndefined();
			expect(readProcess(at("emptystart.json", `{"pid":${process.pid},"start":""}`))).toBeUndefined();
			expect(readProcessRecord(at("nostart.json", `{"pid":${process.pid}}`))).toEqual({
				invalid: "nostart.json: / must have required properties start",
			});
			expect(readProcessRecord(join(root, "absent.json"))).toEqual({ missing: true });
			expect(readProcess(at("ok.json", `{"pid":${process.pid},"start":"123"}`))).toEqual({
				pid: process.pid,
				start: "123",
			});
			expect(kill).not.toHaveBeenCalled();
		} finally {
			kill.mockRestore();
		}
		expect(readSlot(at("slot-0.json", ""))).toEqual({ invalid: "slot-0.json: empty file" });
		expect(readSlot(at("slot-1.json", '{"pid":12'))).toMatchObject({
			invalid: expect.stringContaining("slot-1.json: invalid JSON"),
		});
		expect(readSlot(at("slot-2.json", '{"pid":1234,"start":"9"}'))).toEqual({
			invalid: "slot-2.json: / must have required properties runId",
		});
		expect(readSlot(at("slot-3.json", '{"pid":1234,"start":"9","runId":"run-a"}'))).toEqual({
			owner: { pid: 1234, start: "9", runId: "run-a" },
		});
		expect(readSlot(join(root, "slot-9.json"))).toEqual({ missing: true });
	});

	it("names the field of a meta shape error", () => {
		expect(() => checkShape(MetaSchema, { version: 1 }, "meta.json")).toThrow(
			/^meta\.json: \/ must have required properties/,
		);
	});
});

describe("dashboard over a hostile store", () => {
	it("renders the list and every peek with wrong-shaped and escape-laden rows: no crash, no control byte", async () => {
		const { store: dir, paths } = store();
		writeRow(paths, "name-42", { metaPatch: { name: 42 } });
		writeRow(paths, "events-1", { statusPatch: { recentEvents: [1] } });
		writeRow(paths, "question-42", { statusPatch: { state: "needs_input", question: 42 } });
		writeRow(paths, "state-bogus", { statusPatch: { state: "bogus" } });
		writeRow(paths, "usage-x", { statusPatch: { usage: "x" } });
		writeRow(paths, "hostile", {
			metaPatch: {
				name: `evil ${HOSTILE}`,
				attempt: { setId: HOSTILE, index: 1, count: 2, forkOf: HOSTILE },
				merged: { at: 1, commit: HOSTILE, into: HOSTILE },
			},
			statusPatch: {
				state: "needs_input",
				question: `Which? ${HOSTILE}`,
				questionOptions: [HOSTILE],
				latestAssistant: HOSTILE,
				summary: HOSTILE,
				error: HOSTILE,
				stderrTail: HOSTILE,
				recentEvents: [{ at: 1, text: HOSTILE }],
				live: { text: HOSTILE, tool: { name: HOSTILE, detail: HOSTILE, startedAt: 1 } },
				receipts: [{ id: "m", status: "rejected", at: 1, reason: HOSTILE, preview: HOSTILE }],
			},
		});
		const service = createBoardService({ storeDir: dir, piCommand: ["pi"] });
		const feed = new BoardFeed(() => service);
		const { dash } = boardOn(service, { rows: 40, cwd: "/tmp", feed });
		await dash.start();
		const screens = [dash.render(120).join("\n")];
		for (let n = 0; n < 6; n++) {
			dash.handleInput("\r");
			await new Promise((resolve) => setImmediate(resolve));
			screens.push(dash.render(120).join("\n"));
			dash.handleInput("\x1b");
			dash.handleInput("\x1b[B");
		}
		dash.dispose();
		expect(screens[0]).toContain("evil");
		expect(screens[1]).toContain("Which?"); // the peek of the hostile row really rendered its question
		for (const id of ["name-42", "events-1", "question-42", "state-bogus", "usage-x"])
			expect(screens.join("\n"), id).toContain(id);
		expect(screens.join("\n")).toContain("status.json: /state must be equal to one of");
		// pi-tui's truncation appends its own SGR reset (ESC[0m); no hostile input contains that one.
		for (const screen of screens) expect(screen.replaceAll("\x1b[0m", "")).not.toMatch(TERMINAL_CONTROL);
	});
});

describe("symlinks and special files in the store", () => {
	it("never follows a symlinked row dir, meta.json or status.json, never blocks on a FIFO, and archive refuses them", async () => {
		const { root, store: dir, paths } = store();
		const outside = join(root, "outside");
		mkdirSync(outside);
		// A complete, valid row living outside the store.
		const elsewhere = store();
		writeRow(elsewhere.paths, "linked-dir");
		symlinkSync(elsewhere.paths.row("linked-dir"), paths.row("linked-dir"));
		const target = writeRow(paths, "linked-meta");
		writeFileSync(join(outside, "meta.json"), readFileSync(paths.meta("linked-meta")));
		rmSync(paths.meta("linked-meta"));
		symlinkSync(join(outside, "meta.json"), paths.meta("linked-meta"));
		const linkedStatus = writeRow(paths, "linked-status");
		writeFileSync(join(outside, "status.json"), readFileSync(join(linkedStatus.runDir, "status.json")));
		rmSync(join(linkedStatus.runDir, "status.json"));
		symlinkSync(join(outside, "status.json"), join(linkedStatus.runDir, "status.json"));
		const linkedRuns = writeRow(paths, "linked-runs");
		rmSync(paths.runs("linked-runs"), { recursive: true });
		// The runs dir points at a complete run elsewhere: status.json would be readable through it.
		writeRow(elsewhere.paths, "linked-runs");
		symlinkSync(elsewhere.paths.runs("linked-runs"), paths.runs("linked-runs"));
		writeRow(paths, "fifo-meta");
		rmSync(paths.meta("fifo-meta"));
		execFileSync("mkfifo", [paths.meta("fifo-meta")]);

		const board = createBoardService({ storeDir: dir, piCommand: ["pi"] });
		const rows = new Map((await board.list()).map((row) => [row.id, row]));
		expect(rows.get("linked-dir")?.error).toBe("row directory: is a symbolic link (not followed)");
		expect(rows.get("linked-meta")?.error).toBe("meta.json: is a symbolic link (not followed)");
		expect(rows.get("linked-status")?.error).toBe("status.json: is a symbolic link (not followed)");
		expect(rows.get("linked-runs")?.error).toBe("runs directory: is a symbolic link (not followed)");
		expect(rows.get("fifo-meta")?.error).toBe("meta.json: not a regular file");
		expect(target.id).toBe("linked-meta");
		expect(linkedRuns.id).toBe("linked-runs");

		const outsideMeta = readFileSync(join(outside, "meta.json"), "utf8");
		const elsewhereMeta = readFileSync(elsewhere.paths.meta("linked-dir"), "utf8");
		await expect(board.archive("linked-meta")).rejects.toThrow(/symbolic link/);
		await expect(board.archive("linked-dir")).rejects.toThrow(/symbolic link/);
		await expect(board.rename("linked-dir", "pwned")).rejects.toThrow(/symbolic link/);
		expect(readFileSync(join(outside, "meta.json"), "utf8")).toBe(outsideMeta);
		expect(readFileSync(elsewhere.paths.meta("linked-dir"), "utf8")).toBe(elsewhereMeta);
		expect(lstatSync(paths.meta("linked-meta")).isSymbolicLink()).toBe(true);
		// O_NOFOLLOW holds even when the lstat check is raced: the cache reader refuses the link itself.
		expect(() => readStatus(linkedStatus.runDir, new FileCache())).toThrow(
			"status.json: is a symbolic link (not followed)",
		);
	});
});

describe("store guard", () => {
	it("refuses a world- or group-writable store, a symlinked top-level dir and a foreign owner, naming the path", async () => {
		const { store: dir } = store();
		expect(() => guardStore(dir)).not.toThrow();
		expect(() => guardStore(join(dir, "not-yet"))).not.toThrow();
		chmodSync(dir, 0o777);
		expect(() => guardStore(dir)).toThrow(
			`agent-board: refusing store ${dir}: writable by group or others (mode 0777); run: chmod 700 ${dir}`,
		);
		const board = createBoardService({ storeDir: dir, piCommand: ["pi"] });
		await expect(board.list()).rejects.toThrow(/refusing store .*writable by group or others/);
		await expect(board.dispatch({ prompt: "x", cwd: "/tmp" })).rejects.toThrow(/refusing store/);
		chmodSync(dir, 0o700);
		chmodSync(join(dir, "rows"), 0o770);
		expect(() => guardStore(dir)).toThrow(
			`refusing store directory ${join(dir, "rows")}: writable by group or others (mode 0770)`,
		);
		chmodSync(join(dir, "rows"), 0o700);
		const { root: other } = store();
		symlinkSync(other, join(dir, "slots"));
		expect(() => guardStore(dir)).toThrow(
			`refusing store directory ${join(dir, "slots")}: is a symbolic link (not followed)`,
		);
		rmSync(join(dir, "slots"));
		expect(() => guardStore(dir)).not.toThrow();
	});

	it("refuses a store owned by another user", (ctx) => {
		requires(ctx, "root (chown to another user)", notRoot());
		const { store: dir } = store();
		chownSync(dir, 65534, 65534);
		expect(() => guardStore(dir)).toThrow(
			`agent-board: refusing store ${dir}: owned by uid 65534, not by you (uid 0)`,
		);
		chownSync(dir, 0, 0);
		expect(() => guardStore(dir)).not.toThrow();
	});

	it("names the path (the real file, not the temp) and the errno in disk errors", () => {
		const enospc = Object.assign(new Error("ENOSPC: no space left on device, open"), { code: "ENOSPC" });
		expect(fsErrorMessage(enospc, "/s/rows/r1/runs/run-1/.run.json.4242.3.tmp", "cannot write")).toBe(
			"cannot write /s/rows/r1/runs/run-1/run.json: ENOSPC (no space left on device)",
		);
		expect(fsErrorMessage(Object.assign(new Error("x"), { code: "EROFS" }), "/s/rows/r1/meta.json")).toBe(
			"cannot access /s/rows/r1/meta.json: EROFS (read-only file system)",
		);
		expect(fsErrorMessage(Object.assign(new Error("odd"), { code: "EWHAT" }), "/p", "cannot read")).toBe(
			"cannot read /p: EWHAT (odd)",
		);
	});

	it("removes a half-created row dir only when it is a real directory under rows/", () => {
		const { root, paths } = store();
		mkdirSync(join(paths.row("half"), "runs", "run-x"), { recursive: true });
		writeFileSync(join(paths.row("half"), "runs", "run-x", "run.json"), "{}");
		const keep = join(root, "keep");
		mkdirSync(keep);
		writeFileSync(join(keep, "precious"), "data");
		symlinkSync(keep, paths.row("linked"));
		symlinkSync(keep, join(paths.row("half"), "runs", "inner-link"));
		expect(removeHalfRow(paths.rows, "half")).toBe(true);
		expect(existsSync(paths.row("half"))).toBe(false);
		expect(removeHalfRow(paths.rows, "linked")).toBe(false);
		expect(removeHalfRow(paths.rows, "../keep")).toBe(false);
		expect(readFileSync(join(keep, "precious"), "utf8")).toBe("data");
	});
});

describe("prefs", () => {
	it("writes 0600 (replacing an old 0644 file), reads back, and ignores wrong shapes and symlinks", async () => {
		const { root, store: dir } = store();
		writeFileSync(join(dir, PREFS_FILE), "{}", { mode: 0o644 });
		chmodSync(join(dir, PREFS_FILE), 0o644);
		await savePrefs(dir, { cwd: "/tmp", model: "faux/faux-1", thinking: "low", worktreeMode: "auto" });
		expect(statSync(join(dir, PREFS_FILE)).mode & 0o777).toBe(0o600);
		expect(await loadPrefs(dir)).toEqual({
			cwd: "/tmp",
			model: "faux/faux-1",
			thinking: "low",
			worktreeMode: "auto",
		});
		expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
		writeFileSync(join(dir, PREFS_FILE), '{"cwd":42}');
		expect(await loadPrefs(dir)).toEqual({});
		rmSync(join(dir, PREFS_FILE));
		writeFileSync(join(root, "elsewhere.json"), '{"cwd":"/elsewhere"}');
		symlinkSync(join(root, "elsewhere.json"), join(dir, PREFS_FILE));
		expect(await loadPrefs(dir)).toEqual({});
		const fresh = join(root, "fresh-store");
		await savePrefs(fresh, {});
		expect(statSync(fresh).mode & 0o777).toBe(0o700);
	});
});
