/**
 * Search (runner/search/): the query's words and filters, and the index built from a store's files (a
 * session as pi writes it, meta, status, touched.json), kept up to date by what is new, and built again
 * when deleted, of another version, or corrupt. Spawns nothing: the index is updated in this process.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseQuery } from "../runner/search/query-parse.mjs";
import { parseSince } from "../runner/time-words.mjs";
import { indexPaths, updateIndex } from "../runner/search/search-index.mjs";
import { openReader, queryIndex, type SearchHit } from "../runner/search/search-query.mjs";
import { splitSnippet } from "../runner/search/text.mjs";
import { loadSqlite } from "../runner/search/sqlite.mjs";

const roots: string[] = [];
afterAll(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function newStore(): string {
	const root = mkdtempSync(join(tmpdir(), "pab-search-"));
	roots.push(root);
	for (const dir of ["rows", "sessions", "notify"]) mkdirSync(join(root, dir), { recursive: true, mode: 0o700 });
	return root;
}

const line = (value: unknown): string => `${JSON.stringify(value)}\n`;
const user = (text: string) => line({ type: "message", message: { role: "user", content: text } });
const assistant = (content: unknown[]) => line({ type: "message", message: { role: "assistant", content } });
const toolResult = (toolName: string, text: string, details?: unknown) =>
	line({ type: "message", message: { role: "toolResult", toolName, content: [{ type: "text", text }], details } });

function addRow(
	root: string,
	id: string,
	options: {
		name?: string;
		state?: string;
		archived?: boolean;
		target?: string;
		preset?: string;
		files?: string[];
		at?: number;
	},
): void {
	const runId = `run-${id}`;
	const runDir = join(root, "rows", id, "runs", runId);
	mkdirSync(runDir, { recursive: true });
	const at = options.at ?? Date.now();
	writeFileSync(
		join(root, "rows", id, "meta.json"),
		JSON.stringify({
			version: 1,
			id,
			name: options.name ?? id,
			createdAt: at,
			updatedAt: at,
			archived: options.archived === true,
			currentRunId: runId,
			...(options.target ? { target: options.target } : {}),
			...(options.preset ? { preset: options.preset } : {}),
		}),
	);
	writeFileSync(
		join(runDir, "status.json"),
		JSON.stringify({ runId, rowId: id, state: options.state ?? "completed", lastActivityAt: at }),
	);
	if (options.files)
		writeFileSync(join(root, "rows", id, "touched.json"), JSON.stringify({ key: "k", files: options.files }));
	writeFileSync(join(root, "notify", id), "");
}

async function search(root: string, text: string, now = Date.now()): Promise<SearchHit[]> {
	const db = await openReader(root);
	if (!db) throw new Error("no index");
	try {
		return queryIndex(db, parseQuery(text, now));
	} finally {
		db.close();
	}
}

describe("query words and filters", () => {
	it("quotes every word and phrase, so FTS5's operators are words too", () => {
		const q = parseQuery('deadlock "flaky test" AND NEAR(x) pre*');
		expect(q.terms).toEqual(["deadlock", "flaky test", "AND", "NEAR(x)", "pre*"]);
		expect(q.match).toBe('"deadlock" "flaky test" "AND" "NEAR(x)" "pre" *');
		expect(parseQuery('a"b').match).toBe('"a""b"');
		// Nothing a tokenizer keeps: no phrase (an empty phrase would be an error).
		expect(parseQuery("--- ...").terms).toEqual([]);
	});

	it("reads since:, on:, s:, preset: and file:", () => {
		const now = Date.UTC(2026, 11, 6, 12);
		const q = parseQuery("since:12h on:build/box2 s:need preset:Review file:./src/auth/ words", now);
		expect(q.since).toBe(now - 12 * 3_600_000);
		expect(q.on).toEqual(["build/box2"]);
		expect(q.states).toEqual(["needs_input"]);
		expect(q.presets).toEqual(["review"]);
		expect(q.files).toEqual(["src/auth/"]);
		expect(q.terms).toEqual(["words"]);
		expect(parseQuery("s:nothing").states).toEqual(["__none__"]);
		expect(parseQuery('file:"src/a b/"').files).toEqual(["src/a b/"]);
		expect(parseQuery("since:yesterday").errors[0]).toContain("since:yesterday");
		expect(parseSince("3d", now)).toBe(now - 3 * 86_400_000);
		expect(parseSince("2026-12-01", now)).toBe(new Date(2026, 11, 1).getTime());
		// A colon word that is no filter stays a word.
		expect(parseQuery("http://x").terms).toEqual(["http://x"]);
	});

	it("a snippet keeps no escape sequence or control character, and says where its matches are", () => {
		const marked = "a \x1b]52;c;ZXZpbA==\x07b\ue000dead\x1b[31mlock\ue001 c\u202e d\r\ne";
		const { text, matches } = splitSnippet(marked);
		expect(text).toBe("a bdeadlock c d e");
		expect(matches).toEqual([[3, 11]]);
		expect(text).not.toMatch(/[\x00-\x1f\x7f-\x9f\u202e]/);
	});
});

describe("the index", () => {
	it("node:sqlite loads with FTS5 and without its warning", async () => {
		const warnings: string[] = [];
		const listener = (warning: Error) => warnings.push(warning.message);
		process.on("warning", listener);
		const { DatabaseSync } = await loadSqlite();
		const db = new DatabaseSync(":memory:");
		db.exec("CREATE VIRTUAL TABLE t USING fts5(body)");
		db.close();
		await new Promise((resolve) => setImmediate(resolve));
		process.off("warning", listener);
		expect(warnings.filter((w) => /sqlite/i.test(w))).toEqual([]);
	});

	it("finds a word in one tool's output, a prompt, a question and its answer, an archived row, a changed file", async () => {
		const root = newStore();
		addRow(root, "r1", { name: "fix login", files: ["src/auth/login.ts"] });
		writeFileSync(
			join(root, "sessions", "r1.jsonl"),
			line({ type: "session", version: 3, id: "s", cwd: "/x" }) +
				user("Fix the login redirect") +
				assistant([
					{ type: "text", text: "Running the tests." },
					{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "npm test" } },
				]) +
				toolResult("bash", "ERROR: postgres \x1b[31mdeadlock\x1b[0m detected in zebrafish_suite") +
				assistant([
					{
						type: "toolCall",
						id: "c2",
						name: "ask_user",
						arguments: { question: "Which database?", options: ["pg", "mysql"] },
					},
				]) +
				toolResult("ask_user", "The user answered: pg please", {
					question: "Which database?",
					answer: "pg please",
				}),
		);
		addRow(root, "r2", { name: "old one", archived: true, state: "failed" });
		writeFileSync(join(root, "sessions", "r2.jsonl"), user("archived prompt about quokka"));
		expect(await updateIndex(root)).toMatchObject({ built: "missing" });

		const hits = await search(root, "zebrafish_suite");
		expect(hits.map((h) => h.rowId)).toEqual(["r1"]);
		expect(hits[0]?.fields).toEqual(["tool output"]);
		expect(hits[0]?.snippet?.text).toContain("postgres deadlock detected");
		expect(hits[0]?.snippet?.text).not.toContain("\x1b");
		expect((await search(root, '"postgres deadlock"'))[0]?.rowId).toBe("r1");
		expect((await search(root, "npm"))[0]?.fields).toEqual(["tool call"]);
		expect((await search(root, "redirect"))[0]?.fields).toEqual(["prompt"]);
		expect((await search(root, "database"))[0]?.fields).toEqual(["question"]);
		expect((await search(root, "please"))[0]?.fields).toEqual(["answer"]);
		const archived = await search(root, "quokka");
		expect(archived.map((h) => [h.rowId, h.archived])).toEqual([["r2", true]]);
		expect((await search(root, "file:src/auth")).map((h) => h.rowId)).toEqual(["r1"]);
		expect((await search(root, "file:src/other")).map((h) => h.rowId)).toEqual([]);
		expect((await search(root, "s:fail")).map((h) => h.rowId)).toEqual(["r2"]);
		// A phrase's words in another order are no match.
		expect(await search(root, '"deadlock postgres"')).toEqual([]);
	});

	it("reads only what is new: an appended line, a new row, a gone row, a changed name", async () => {
		const root = newStore();
		addRow(root, "a", { name: "alpha" });
		writeFileSync(join(root, "sessions", "a.jsonl"), user("first words"));
		await updateIndex(root);
		expect(await search(root, "second")).toEqual([]);

		appendFileSync(join(root, "sessions", "a.jsonl"), assistant([{ type: "text", text: "second words" }]));
		// A half-written line is not read until its end comes.
		appendFileSync(join(root, "sessions", "a.jsonl"), '{"type":"message","message":{"role":"user","content":"third');
		writeFileSync(join(root, "notify", "a"), "");
		const update = await updateIndex(root);
		expect(update?.rows).toBe(1);
		expect((await search(root, "second")).map((h) => h.fields)).toEqual([["text"]]);
		expect(await search(root, "third")).toEqual([]);
		appendFileSync(join(root, "sessions", "a.jsonl"), ' words"}}\n');
		writeFileSync(join(root, "notify", "a"), "");
		await updateIndex(root);
		expect((await search(root, "third")).map((h) => h.rowId)).toEqual(["a"]);
		// Each piece once: "words" is in three pieces of one row, one hit.
		expect((await search(root, "words")).length).toBe(1);

		addRow(root, "b", { name: "beta gamma" });
		await updateIndex(root);
		expect((await search(root, "gamma")).map((h) => [h.rowId, h.fields])).toEqual([["b", ["name"]]]);
		const meta = JSON.parse(readFileSync(join(root, "rows", "b", "meta.json"), "utf8"));
		writeFileSync(join(root, "rows", "b", "meta.json"), JSON.stringify({ ...meta, name: "beta delta" }));
		writeFileSync(join(root, "notify", "b"), "");
		await updateIndex(root);
		expect(await search(root, "gamma")).toEqual([]);
		expect((await search(root, "delta")).map((h) => h.rowId)).toEqual(["b"]);

		rmSync(join(root, "rows", "b"), { recursive: true });
		await updateIndex(root);
		expect(await search(root, "delta")).toEqual([]);
		// An unchanged store (its last touches older than the few seconds a session's append may lag one): nothing looked at.
		const past = new Date(Date.now() - 60_000);
		for (const name of ["a", ""]) utimesSync(join(root, "notify", name), past, past);
		await updateIndex(root);
		expect((await updateIndex(root))?.rows).toBe(0);
	});

	it("an update its budget cuts short makes progress: new rows first, a scan of the marks taken up where it stopped", async () => {
		const root = newStore();
		const ids = ["r1", "r2", "r3", "r4", "r5"];
		for (const id of ids) addRow(root, id, { name: `row ${id}` });
		await updateIndex(root);
		// Three rows change (their marks touched), and a new one comes: with no budget at all, each pass still
		// indexes one row; the new row is the first, though every mark is to be looked at.
		for (const id of ["r1", "r3", "r5"]) {
			const path = join(root, "rows", id, "meta.json");
			const meta = JSON.parse(readFileSync(path, "utf8"));
			writeFileSync(path, JSON.stringify({ ...meta, name: `renamed okapi ${id}` }));
			writeFileSync(join(root, "notify", id), "");
		}
		addRow(root, "r6", { name: "newcomer" });
		const first = await updateIndex(root, { budgetMs: 0 });
		expect(first?.complete).toBe(false);
		expect((await search(root, "newcomer")).map((h) => h.rowId)).toEqual(["r6"]);
		let passes = 1;
		for (let done = false; !done; passes++) {
			const result = await updateIndex(root, { budgetMs: 0 });
			done = result?.complete === true;
			if (passes > ids.length + 3) throw new Error("the update never completes");
		}
		// One mark looked at a pass: the six marks in six passes more, not the same first one over again.
		expect(passes).toBeLessThanOrEqual(8);
		expect((await search(root, "okapi")).map((h) => h.rowId).sort()).toEqual(["r1", "r3", "r5"]);
		// The marks moved on: the changes are not looked at again once old enough.
		const past = new Date(Date.now() - 60_000);
		for (const name of [...ids, "r6", ""]) utimesSync(join(root, "notify", name), past, past);
		await updateIndex(root);
		expect((await updateIndex(root))?.rows).toBe(0);
	});

	it("is built again when deleted, of another version, or corrupt (moved aside)", async () => {
		const root = newStore();
		addRow(root, "a", { name: "alpha" });
		writeFileSync(join(root, "sessions", "a.jsonl"), user("needle in the session"));
		await updateIndex(root);
		const { file, corrupt } = indexPaths(root);
		rmSync(file);
		expect(await updateIndex(root)).toMatchObject({ built: "missing" });
		expect((await search(root, "needle")).map((h) => h.rowId)).toEqual(["a"]);

		const { DatabaseSync } = await loadSqlite();
		const db = new DatabaseSync(file);
		db.exec("PRAGMA user_version = 999");
		db.close();
		expect(await openReader(root)).toBeUndefined();
		expect(await updateIndex(root)).toMatchObject({ built: "version" });
		expect((await search(root, "needle")).map((h) => h.rowId)).toEqual(["a"]);

		writeFileSync(file, "this is no database at all, just words ".repeat(200));
		expect(await updateIndex(root)).toMatchObject({ built: "corrupt" });
		expect(readFileSync(corrupt, "utf8")).toContain("no database");
		expect((await search(root, "needle")).map((h) => h.rowId)).toEqual(["a"]);
	});

	it("one writer: an update while another live process holds the lock waits, then leaves it", async () => {
		const root = newStore();
		addRow(root, "a", { name: "alpha" });
		const { dir, lock } = indexPaths(root);
		mkdirSync(dir, { recursive: true });
		// This process's own record: a live holder (pid and start time match).
		const { processStartTime } = await import("../runner/store/proc.mjs");
		writeFileSync(lock, JSON.stringify({ pid: process.pid, start: processStartTime(process.pid), token: "other" }));
		expect(await updateIndex(root, { waitMs: 100 })).toBeUndefined();
		// A holder that is gone (a pid with another start time) is broken.
		writeFileSync(lock, JSON.stringify({ pid: process.pid, start: "0", token: "dead" }));
		expect(await updateIndex(root)).toMatchObject({ built: "missing" });
	});
});
