/**
 * Attach to a row that ran on a target opens a local copy of its session whose cwd is the row's local
 * worktree (pi reads it so), never the far side's path; what the user says in the copy stays on the next
 * attach; a row whose worktree or session is not here is refused with the reason, and pi is not switched.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { attachSessionFor } from "../src/board/presence/attach-session.ts";
import { attachTo } from "../src/board/presence/attach.ts";
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { BoardService } from "../src/board/engine/types.ts";
import { makeRow } from "../test-support/fake-board-service.ts";

const FAR = "/home/far-user/.agent-board/work/abc123";
const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

function setup() {
	const root = mkdtempSync(join(tmpdir(), "kinds-attach-"));
	dirs.push(root);
	const store = join(root, "store");
	const worktree = join(root, "worktrees", "abc123");
	mkdirSync(worktree, { recursive: true });
	mkdirSync(join(store, "sessions"), { recursive: true });
	const sessionFile = join(store, "sessions", "abc123.jsonl");
	const header = { type: "session", version: 3, id: "s-1", timestamp: "2026-01-01T00:00:00.000Z", cwd: FAR };
	const message = {
		type: "message",
		id: "m1",
		parentId: null,
		timestamp: "2026-01-01T00:00:01.000Z",
		message: { role: "user", content: "fix it", timestamp: 1 },
	};
	writeFileSync(sessionFile, `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`);
	const row = makeRow({
		id: "abc123",
		name: "far row",
		target: "box1",
		host: "box1",
		worktreePath: worktree,
		sessionFile,
	});
	return { store, worktree, sessionFile, row };
}

describe("attach to a row that ran elsewhere", () => {
	it("opens a local copy whose cwd is the local worktree; the row's session is untouched", () => {
		const { store, worktree, sessionFile, row } = setup();
		const before = readFileSync(sessionFile, "utf8");
		const copy = attachSessionFor(store, row);
		expect(copy).not.toBe(sessionFile);
		expect(copy.startsWith(join(store, "attach", "sessions"))).toBe(true);
		expect(SessionManager.open(copy).getCwd()).toBe(worktree);
		expect(readFileSync(copy, "utf8")).not.toContain(FAR);
		expect(readFileSync(copy, "utf8").split("\n").slice(1)).toEqual(before.split("\n").slice(1));
		expect(readFileSync(sessionFile, "utf8")).toBe(before);
		// A local row opens its own session.
		const local = makeRow({ sessionFile: "/x/own.jsonl" });
		expect(attachSessionFor(store, local)).toBe("/x/own.jsonl");
	});

	it("keeps what was said in the copy; a session that grew since gets a fresh copy", () => {
		const { store, sessionFile, row } = setup();
		const copy = attachSessionFor(store, row);
		appendFileSync(copy, `${JSON.stringify({ type: "message", id: "m2", parentId: "m1", timestamp: "x" })}\n`);
		expect(attachSessionFor(store, row)).toBe(copy);
		appendFileSync(sessionFile, `${JSON.stringify({ type: "message", id: "f2", parentId: "m1", timestamp: "y" })}\n`);
		const fresh = attachSessionFor(store, row);
		expect(fresh).not.toBe(copy);
		expect(readFileSync(fresh, "utf8")).toContain('"f2"');
		expect(readFileSync(copy, "utf8")).toContain('"m2"');
	});

	it("refuses with the reason when the worktree or the session is not on this machine", () => {
		const { store, worktree, sessionFile, row } = setup();
		expect(() => attachSessionFor(store, { ...row, worktreePath: undefined })).toThrow(
			/cannot attach to far row: it ran on box1 and has no worktree on this machine/,
		);
		rmSync(sessionFile);
		expect(() => attachSessionFor(store, row)).toThrow(/its session has not come back from box1 yet/);
		rmSync(worktree, { recursive: true });
		expect(() => attachSessionFor(store, row)).toThrow(/its worktree on this machine is gone/);
	});

	it("attachTo switches pi to the copy, or says why and does not switch", async () => {
		const { store, worktree, row } = setup();
		const switched: string[] = [];
		const notes: string[] = [];
		const ctx = {
			hasUI: true,
			ui: { notify: (text: string) => notes.push(text) },
			sessionManager: { getSessionFile: () => "/me/mine.jsonl" },
			switchSession: async (path: string) => {
				switched.push(path);
				return { cancelled: false };
			},
		} as unknown as ExtensionCommandContext;
		const service = { storeDir: store, markViewed: async () => undefined } as unknown as BoardService;
		await attachTo(ctx, service, row, undefined);
		expect(switched).toHaveLength(1);
		expect(SessionManager.open(switched[0]!).getCwd()).toBe(worktree);
		rmSync(worktree, { recursive: true });
		await attachTo(ctx, service, row, undefined);
		expect(switched).toHaveLength(1);
		expect(notes.at(-1)).toMatch(/cannot attach to far row: its worktree on this machine is gone/);
	});
});
