/**
 * worker/session-writes.ts: pi's session writes on a disk that refuses them. A stand-in with pi's
 * _persist shape (a first write "wx" of every entry, then one appended line each) writes a real file;
 * the disk's refusal is an ENOSPC thrown after part of the bytes went out, as a full disk does.
 */
import { appendFileSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { guardSessionWrites } from "../src/board/worker/session-writes.ts";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });

/** pi's SessionManager as far as writes go; `full` makes every write put out half its bytes, then fail. */
class Manager {
	flushed = false;
	full = false;
	entries: { id: string }[] = [];
	sessionFile: string;
	constructor(sessionFile: string) {
		this.sessionFile = sessionFile;
	}
	add(id: string): void {
		const entry = { id };
		this.entries.push(entry);
		this._persist(entry);
	}
	_persist(entry: { id: string }): void {
		const write = (fd: number, text: string) => {
			if (!this.full) return void writeSync(fd, text);
			writeSync(fd, text.slice(0, Math.ceil(text.length / 2)));
			throw enospc();
		};
		if (!this.flushed) {
			const fd = openSync(this.sessionFile, "wx");
			try {
				for (const e of this.entries) write(fd, `${JSON.stringify(e)}\n`);
			} finally {
				closeSync(fd);
			}
			this.flushed = true;
		} else if (this.full) {
			appendFileSync(this.sessionFile, `${JSON.stringify(entry)}\n`.slice(0, 4));
			throw enospc();
		} else appendFileSync(this.sessionFile, `${JSON.stringify(entry)}\n`);
	}
}

const lines = (path: string) => readFileSync(path, "utf8");

describe("pi's session writes on a full disk", () => {
	it("a refused first write and refused appends wait in memory, then go out whole and in order, once each", async () => {
		const dir = mkdtempSync(join(tmpdir(), "pab-session-writes-"));
		dirs.push(dir);
		const manager = new Manager(join(dir, "s.jsonl"));
		const writes = guardSessionWrites(manager);
		expect(writes).toBeDefined();
		expect(guardSessionWrites(manager)).toBe(writes);
		manager.full = true;
		manager.add("a");
		manager.add("b");
		// The half-made first file is gone: the next first write can make it ("wx" would say EEXIST).
		expect(() => readFileSync(manager.sessionFile)).toThrow(/ENOENT/);
		expect(writes?.waiting()).toBe(2);
		manager.full = false;
		manager.add("c");
		expect(lines(manager.sessionFile)).toBe('{"id":"a"}\n{"id":"b"}\n{"id":"c"}\n');
		expect(writes?.waiting()).toBe(0);

		manager.full = true;
		manager.add("d");
		// The torn append was cut back to the last whole line.
		expect(lines(manager.sessionFile)).toBe('{"id":"a"}\n{"id":"b"}\n{"id":"c"}\n');
		expect(await writes?.drain(50)).toBe(false);
		manager.full = false;
		expect(await writes?.drain(5000)).toBe(true);
		manager.add("e");
		expect(lines(manager.sessionFile)).toBe('{"id":"a"}\n{"id":"b"}\n{"id":"c"}\n{"id":"d"}\n{"id":"e"}\n');
	});

	it("an error that is not the disk's goes to pi as before; a manager without _persist is left alone", () => {
		const dir = mkdtempSync(join(tmpdir(), "pab-session-writes-"));
		dirs.push(dir);
		const manager = new Manager(join(dir, "s.jsonl"));
		guardSessionWrites(manager);
		manager.add("a");
		manager.flushed = false;
		expect(() => manager.add("b")).toThrow(/EEXIST/);
		expect(guardSessionWrites({})).toBeUndefined();
	});
});
