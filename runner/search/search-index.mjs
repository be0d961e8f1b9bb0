// The search index: <store>/search/index.sqlite, node:sqlite with FTS5. A cache, never the source of truth:
// built from the rows' files (meta, the current run's status, touched.json, the session file) and
// supervisor.log; built again when it is missing, of another schema version, or unreadable (a corrupt file is
// moved aside, never read again). One writer at a time, under search/index.lock (an owner file: pid and start
// time, broken only when its holder is gone); readers open it read-only (search-query.mjs).
//
// Incremental: each row's entry records what of it is indexed (its files' stat key, the session's inode and
// the byte offset read up to), so an update reads only what is new. Which rows to look at: those that came
// or went when rows/ changed (a listing against the index's own), then the rows whose notify/<id> was touched
// since the last update began (every writer touches it on each change; newest row first, a scan the budget
// cut short taken up where it stopped), else none: an update of an unchanged store is two stats.
import { lstatSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { DIR_MODE } from "../store/fs-util.mjs";
import { tryLockFile } from "../store/row-lock.mjs";
import { listInside, readInside } from "../store/safe-read.mjs";
import { isValidId, rowDirOf, runDirOf, sessionFileOf } from "../store/store-layout.mjs";
import { SUPERVISOR_LOG } from "../supervisor/supervisor-log.mjs";
import { placeOf, rowPieces, sessionPieces, supervisorPieces } from "./extract.mjs";
import { loadSqlite } from "./sqlite.mjs";

/** Bump when what is indexed or how changes: an index of another version is built again. */
export const SCHEMA_VERSION = 2;
/** A session is read this much at a time. */
const READ_BYTES = 8 * 1024 * 1024;
/** A writer's notify touch may land a moment before its session's append: rows touched this long before the last update began are looked at again. */
const NOTIFY_SLACK_MS = 5000;
/** Pieces: the row's own (replaced when its files change), its session's, supervisor.log's. */
const HEAD = 0;
const SESSION = 1;
const SUPERVISOR = 2;

/** @param {string} storeRoot */
export function indexPaths(storeRoot) {
	const dir = join(storeRoot, "search");
	return {
		dir,
		file: join(dir, "index.sqlite"),
		lock: join(dir, "index.lock"),
		corrupt: join(dir, "index.sqlite.corrupt"),
	};
}

// prefix = '2 3 4': a query's prefix of 2, 3 or 4 characters (auth*) reads one list of its own rather than
// merging every word's that starts so (11,111 words for zq1* at 100,000 rows: 119 ms, p95 202); the index is
// about a third bigger. A longer prefix matches fewer words, and merges them.
const SCHEMA = `
CREATE TABLE rows (row_id TEXT PRIMARY KEY, name TEXT NOT NULL, state TEXT NOT NULL, preset TEXT NOT NULL,
  place TEXT NOT NULL, archived INTEGER NOT NULL, created_at INTEGER NOT NULL, active_at INTEGER NOT NULL,
  head_key TEXT NOT NULL, session_ino INTEGER NOT NULL, session_offset INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX rows_active ON rows (active_at);
CREATE TABLE pieces (id INTEGER PRIMARY KEY, row_id TEXT NOT NULL, kind INTEGER NOT NULL);
CREATE INDEX pieces_row ON pieces (row_id, kind);
CREATE TABLE files (row_id TEXT NOT NULL, path TEXT NOT NULL);
CREATE INDEX files_row ON files (row_id);
CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE docs USING fts5(body, row_id UNINDEXED, field UNINDEXED, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3 4');
`;

/** @typedef {import("node:sqlite").DatabaseSync} Db */

/** SQLite's words for a file that is not a database, or a damaged one. @param {unknown} error */
export function isCorruptError(error) {
	const e = /** @type {{ errcode?: number, message?: string }} */ (error);
	const primary = typeof e?.errcode === "number" ? e.errcode & 0xff : -1;
	return primary === 11 || primary === 26 || /malformed|not a database/i.test(String(e?.message));
}

/** @param {Db} db */
function schemaVersion(db) {
	const row = /** @type {{ user_version?: number } | undefined} */ (db.prepare("PRAGMA user_version").get());
	const tables = db
		.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name IN ('rows','pieces','files','state','docs')")
		.get();
	return Number(tables?.n) === 5 ? Number(row?.user_version ?? 0) : 0;
}

/**
 * Opens the index for writing, building it first when it is missing, of another version, or unreadable.
 * The caller holds the lock. A new index is built aside and renamed into place, so a reader never meets half
 * of one.
 * `check`: read the whole file first (a reader met a damaged page).
 * @param {string} storeRoot @param {{ check?: boolean }} [options]
 * @returns {Promise<{ db: Db, built?: "missing" | "version" | "corrupt" }>}
 */
export async function openWriter(storeRoot, options = {}) {
	const { DatabaseSync } = await loadSqlite();
	const paths = indexPaths(storeRoot);
	/** @type {"missing" | "version" | "corrupt" | undefined} */
	let built;
	let exists = true;
	try {
		lstatSync(paths.file);
	} catch {
		exists = false;
		built = "missing";
	}
	if (exists) {
		let db;
		try {
			db = new DatabaseSync(paths.file);
			db.exec("PRAGMA busy_timeout = 5000");
			const version = schemaVersion(db);
			if (options.check) {
				const result = db.prepare("PRAGMA quick_check(1)").get();
				if (result?.quick_check !== "ok")
					throw new Error(`database disk image is malformed: ${String(result?.quick_check)}`);
			}
			if (version === SCHEMA_VERSION) return { db };
			db.close();
			built = "version";
			rmSync(paths.file, { force: true });
		} catch (error) {
			try {
				db?.close();
			} catch {
				// Closing a connection to a damaged file may fail too; it is moved aside either way.
			}
			built = "corrupt";
			moveAside(paths, error);
		}
	}
	const temp = `${paths.file}.new-${process.pid}`;
	rmSync(temp, { force: true });
	const db = new DatabaseSync(temp);
	try {
		db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;");
		db.exec(SCHEMA);
		db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
		update(db, storeRoot, { all: true });
		db.exec("PRAGMA journal_mode = DELETE; PRAGMA synchronous = NORMAL;");
		db.close();
		renameSync(temp, paths.file);
	} catch (error) {
		try {
			db.close();
		} catch {
			// Already closed.
		}
		rmSync(temp, { force: true });
		throw error;
	}
	const live = new DatabaseSync(paths.file);
	live.exec("PRAGMA busy_timeout = 5000");
	return { db: live, built };
}

/** A damaged index goes aside (the last one kept, to look at), never read again. @param {ReturnType<typeof indexPaths>} paths @param {unknown} _error */
function moveAside(paths, _error) {
	try {
		renameSync(paths.file, paths.corrupt);
	} catch {
		rmSync(paths.file, { force: true });
	}
	rmSync(`${paths.file}-journal`, { force: true });
}

/**
 * Brings the index up to date, as the one writer: takes the lock (waiting up to `waitMs`), opens or builds
 * the index, reads what is new. Returns undefined when another process holds the lock all that time (it is
 * the writer now; what it writes is there when it is done).
 * @param {string} storeRoot
 * @param {{ waitMs?: number, budgetMs?: number, check?: boolean }} [options]
 * @returns {Promise<{ built?: string, rows: number, complete: boolean } | undefined>}
 */
export async function updateIndex(storeRoot, options = {}) {
	const paths = indexPaths(storeRoot);
	mkdirSync(paths.dir, { recursive: true, mode: DIR_MODE });
	const deadline = Date.now() + (options.waitMs ?? 0);
	let release = tryLockFile(paths.lock);
	while (!release && Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, 25));
		release = tryLockFile(paths.lock);
	}
	if (!release) return undefined;
	try {
		for (let attempt = 0; ; attempt++) {
			const { db, built } = await openWriter(storeRoot, { check: options.check === true && attempt === 0 });
			try {
				const result = built ? { rows: -1, complete: true } : update(db, storeRoot, { budgetMs: options.budgetMs });
				db.close();
				return { ...(built ? { built } : {}), rows: result.rows, complete: result.complete };
			} catch (error) {
				try {
					db.close();
				} catch {
					// A damaged file may refuse even this.
				}
				if (!isCorruptError(error) || attempt > 0) throw error;
				moveAside(paths, error);
			}
		}
	} finally {
		release();
	}
}

/**
 * The keeper's update (search-duty.mjs): the named rows alone, and supervisor.log's new lines, into an index
 * that is there and of this version (a build is the search's writer's: it would hold the keeper's loop for
 * minutes). Under the same lock as updateIndex, tried once. The marks are not moved: the next updateIndex
 * still looks at whatever changed since its own last one. Undefined when the lock is held or there is no
 * index to update.
 * @param {string} storeRoot @param {Iterable<string>} ids
 * @returns {Promise<{ rows: number } | undefined>}
 */
export async function updateRows(storeRoot, ids) {
	const paths = indexPaths(storeRoot);
	try {
		if (!lstatSync(paths.file).isFile()) return undefined;
	} catch {
		return undefined;
	}
	const release = tryLockFile(paths.lock);
	if (!release) return undefined;
	try {
		const { DatabaseSync } = await loadSqlite();
		const db = new DatabaseSync(paths.file);
		try {
			db.exec("PRAGMA busy_timeout = 5000");
			if (schemaVersion(db) !== SCHEMA_VERSION) return undefined;
			const ops = statements(db);
			indexSupervisorLog(db, storeRoot, ops);
			let rows = 0;
			db.exec("BEGIN");
			try {
				for (const id of ids) {
					if (!isValidId(id)) continue;
					indexRow(db, storeRoot, id, ops);
					rows++;
				}
				db.exec("COMMIT");
			} catch (error) {
				if (db.isTransaction) db.exec("ROLLBACK");
				throw error;
			}
			return { rows };
		} finally {
			db.close();
		}
	} finally {
		release();
	}
}

/** @param {string} path */
function statKey(path) {
	try {
		const s = lstatSync(path);
		return s.isFile() ? `${s.ino}.${s.size}.${s.mtimeMs}` : "-";
	} catch {
		return "";
	}
}

/** @param {string} dir @param {string} name @returns {Record<string, unknown> | undefined} */
function readJsonInside(dir, name) {
	try {
		const value = JSON.parse(String(readInside(dir, join(dir, name)) ?? ""));
		return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
	} catch {
		return undefined;
	}
}

/** @param {Db} db @param {string} key */
function getState(db, key) {
	const row = db.prepare("SELECT value FROM state WHERE key = ?").get(key);
	return typeof row?.value === "string" ? row.value : undefined;
}

/** @param {Db} db @param {string} key @param {string | number} value */
function setState(db, key, value) {
	db.prepare(
		"INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
	).run(key, String(value));
}

/** @param {string} path */
const mtimeOf = (path) => {
	try {
		return statSync(path).mtimeMs;
	} catch {
		return -1;
	}
};

/**
 * One update pass (the lock held). `all`: look at every row (a build). `budgetMs`: stop looking after that
 * long; what was not looked at is looked at next time.
 *
 * Rows that came or went first (one listing of rows/ against the index's own): a new row is what a search
 * most often waits for, and it is indexed before the stat of every notify/ mark begins (1 s and more at
 * 100,000 rows on a loaded machine). Then the marks, newest row first (ids begin with their creation time);
 * a scan the budget stops is taken up where it stopped by the next pass (`scan_at`), so each pass makes
 * progress: a pass that began over again each time never finished under load, and found nothing (26 s).
 * @param {Db} db @param {string} storeRoot @param {{ all?: boolean, budgetMs?: number }} options
 */
export function update(db, storeRoot, options) {
	const started = Date.now();
	const over = () => options.budgetMs !== undefined && Date.now() - started > options.budgetMs;
	const rowsDir = join(storeRoot, "rows");
	const notifyDir = join(storeRoot, "notify");
	const rowsMtime = mtimeOf(rowsDir);
	const notifyMtime = mtimeOf(notifyDir);
	const lastStart = Number(getState(db, "updated_from") ?? 0);
	const scanAt = getState(db, "scan_at");
	const scanFrom = scanAt ? Number(getState(db, "scan_from") ?? lastStart) : started;
	const ops = statements(db);
	const supervisorDone = indexSupervisorLog(db, storeRoot, ops);
	let rows = 0;
	let complete = true;
	db.exec("BEGIN");
	try {
		/** @param {string} id */
		const index = (id) => {
			indexRow(db, storeRoot, id, ops);
			rows++;
			if (rows % 500 === 0) {
				db.exec("COMMIT");
				db.exec("BEGIN");
			}
		};
		/** At least one row a pass whatever the budget: each pass makes progress. @param {string[]} ids */
		const indexEach = (ids) => {
			for (const id of ids) {
				if (rows > 0 && over()) return false;
				index(id);
			}
			return true;
		};
		if (options.all || String(rowsMtime) !== getState(db, "rows_mtime")) {
			const listed = listInside(rowsDir).filter(isValidId);
			// Rows newer than any the index has (ids begin with their creation time) first, before the index's own
			// list is read (most of a second at 100,000 rows on a loaded machine); then the rest of what came or
			// went. Newest first.
			const newest = String(db.prepare("SELECT max(row_id) AS id FROM rows").get()?.id ?? "");
			complete = indexEach(listed.filter((id) => id > newest).reverse());
			if (complete) {
				const known = new Set(
					db
						.prepare("SELECT row_id FROM rows")
						.all()
						.map((row) => String(row.row_id)),
				);
				const names = new Set(listed);
				/** @type {string[]} */
				const look = [];
				for (const id of known) if (!names.has(id)) look.push(id);
				for (const name of listed) if (!known.has(name)) look.push(name);
				complete = indexEach(look.sort().reverse());
			}
			if (complete) setState(db, "rows_mtime", rowsMtime);
		}
		// notify/ changes with each touch (a rename into it): unchanged since well before the last update began,
		// no row changed since; else the marks touched since then name the rows that did.
		if (complete && !options.all && (scanAt || notifyMtime >= lastStart - NOTIFY_SLACK_MS)) {
			const since = (scanAt ? scanFrom : lastStart) - NOTIFY_SLACK_MS;
			const names = listInside(notifyDir).reverse();
			let looked = 0;
			for (const name of names) {
				if (scanAt && name > scanAt) continue;
				if (looked++ > 0 && over()) {
					complete = false;
					setState(db, "scan_at", name);
					setState(db, "scan_from", scanFrom);
					break;
				}
				if (isValidId(name) && mtimeOf(join(notifyDir, name)) >= since) index(name);
			}
		}
		if (complete) {
			// A scan taken up across passes covers what changed since its first pass began.
			setState(db, "updated_from", scanFrom);
			db.prepare("DELETE FROM state WHERE key IN ('scan_at', 'scan_from')").run();
		}
		db.exec("COMMIT");
	} catch (error) {
		if (db.isTransaction) db.exec("ROLLBACK");
		throw error;
	}
	return { rows, complete: complete && supervisorDone };
}

/** @param {Db} db */
function statements(db) {
	return {
		getRow: db.prepare("SELECT head_key, session_ino, session_offset FROM rows WHERE row_id = ?"),
		addPiece: db.prepare("INSERT INTO pieces (row_id, kind) VALUES (?, ?)"),
		addDoc: db.prepare("INSERT INTO docs (rowid, body, row_id, field) VALUES (?, ?, ?, ?)"),
		dropDocs: db.prepare("DELETE FROM docs WHERE rowid IN (SELECT id FROM pieces WHERE row_id = ? AND kind = ?)"),
		dropPieces: db.prepare("DELETE FROM pieces WHERE row_id = ? AND kind = ?"),
		dropFiles: db.prepare("DELETE FROM files WHERE row_id = ?"),
		addFile: db.prepare("INSERT INTO files (row_id, path) VALUES (?, ?)"),
		dropRow: db.prepare("DELETE FROM rows WHERE row_id = ?"),
		putRow: db.prepare(
			`INSERT INTO rows (row_id, name, state, preset, place, archived, created_at, active_at, head_key, session_ino, session_offset)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			 ON CONFLICT (row_id) DO UPDATE SET name = excluded.name, state = excluded.state, preset = excluded.preset,
			 place = excluded.place, archived = excluded.archived, created_at = excluded.created_at,
			 active_at = excluded.active_at, head_key = excluded.head_key`,
		),
		setSession: db.prepare("UPDATE rows SET session_ino = ?, session_offset = ? WHERE row_id = ?"),
	};
}

/** @typedef {ReturnType<typeof statements>} Ops */

/** @param {Ops} ops @param {string} rowId @param {number} kind @param {import("./extract.mjs").Piece[]} pieces */
function addPieces(ops, rowId, kind, pieces) {
	for (const { field, body } of pieces) {
		const id = Number(ops.addPiece.run(rowId, kind).lastInsertRowid);
		ops.addDoc.run(id, body, rowId, field);
	}
}

/** @param {Ops} ops @param {string} rowId @param {number} kind */
function dropPieces(ops, rowId, kind) {
	ops.dropDocs.run(rowId, kind);
	ops.dropPieces.run(rowId, kind);
}

/** @param {Ops} ops @param {string} rowId */
function forgetRow(ops, rowId) {
	for (const kind of [HEAD, SESSION, SUPERVISOR]) dropPieces(ops, rowId, kind);
	ops.dropFiles.run(rowId);
	ops.dropRow.run(rowId);
}

/**
 * Indexes what is new of one row: its own pieces again when meta, status or touched.json changed; its
 * session from where the last read stopped (from the start when the file was replaced or cut).
 * @param {Db} _db @param {string} storeRoot @param {string} rowId @param {Ops} ops
 */
function indexRow(_db, storeRoot, rowId, ops) {
	const rowDir = rowDirOf(storeRoot, rowId);
	const meta = readJsonInside(rowDir, "meta.json");
	if (!meta || meta.id !== rowId) {
		forgetRow(ops, rowId);
		return;
	}
	const runId = typeof meta.currentRunId === "string" && isValidId(meta.currentRunId) ? meta.currentRunId : "";
	const runDir = runId ? runDirOf(storeRoot, rowId, runId) : "";
	const sessionFile = sessionFileOf(storeRoot, rowId);
	let session;
	try {
		session = lstatSync(sessionFile);
		if (!session.isFile()) session = undefined;
	} catch {
		session = undefined;
	}
	const known = ops.getRow.get(rowId);
	let offset = Number(known?.session_offset ?? 0);
	if (known && session && (Number(known.session_ino) !== session.ino || session.size < offset)) {
		dropPieces(ops, rowId, SESSION);
		offset = 0;
	} else if (known && !session && offset > 0) {
		dropPieces(ops, rowId, SESSION);
		offset = 0;
	}
	const sessionEmpty = offset === 0 && (!session || session.size === 0);
	const headKey = [
		statKey(join(rowDir, "meta.json")),
		runDir ? statKey(join(runDir, "status.json")) : "",
		statKey(join(rowDir, "touched.json")),
		sessionEmpty ? "0" : "1",
	].join("|");
	if (!known || known.head_key !== headKey) {
		const status = runDir ? readJsonInside(runDir, "status.json") : undefined;
		const touched = readJsonInside(rowDir, "touched.json");
		const files = Array.isArray(touched?.files) ? touched.files.filter((f) => typeof f === "string") : [];
		const run = sessionEmpty && runDir ? readJsonInside(runDir, "run.json") : undefined;
		const facts = { meta, status, files, ...(typeof run?.prompt === "string" ? { prompt: run.prompt } : {}) };
		dropPieces(ops, rowId, HEAD);
		addPieces(ops, rowId, HEAD, rowPieces(facts));
		ops.dropFiles.run(rowId);
		for (const file of files) ops.addFile.run(rowId, file);
		const num = (/** @type {unknown} */ value, /** @type {number} */ fallback) =>
			typeof value === "number" && Number.isFinite(value) ? Math.round(value) : fallback;
		const createdAt = num(meta.createdAt, 0);
		ops.putRow.run(
			rowId,
			typeof meta.name === "string" ? meta.name : "",
			typeof status?.state === "string" ? status.state : "",
			typeof meta.preset === "string" ? meta.preset : "",
			placeOf(facts),
			meta.archived === true ? 1 : 0,
			createdAt,
			num(status?.lastActivityAt, num(meta.updatedAt, createdAt)),
			headKey,
			known ? Number(known.session_ino) : 0,
			offset,
		);
	}
	if (!session) return;
	let ino = session.ino;
	while (offset < session.size) {
		const bytes = readInside(
			join(storeRoot, "sessions"),
			sessionFile,
			offset,
			Math.min(session.size, offset + READ_BYTES),
		);
		if (!bytes || bytes.length === 0) break;
		const end = bytes.lastIndexOf(0x0a);
		if (end < 0) {
			// A line longer than a read: skipped whole when the file has more after it, else waited for.
			if (offset + bytes.length >= session.size) break;
			const next = nextNewline(sessionFile, offset + bytes.length, session.size);
			if (next < 0) break;
			offset = next + 1;
			continue;
		}
		for (const line of bytes.subarray(0, end).toString("utf8").split("\n")) {
			if (!line) continue;
			let entry;
			try {
				entry = JSON.parse(line);
			} catch {
				continue;
			}
			addPieces(ops, rowId, SESSION, sessionPieces(entry));
		}
		offset += end + 1;
	}
	ino = session.ino;
	ops.setSession.run(ino, offset, rowId);
}

/** The offset of the next newline at or after `from`, or -1. @param {string} path @param {number} from @param {number} size */
function nextNewline(path, from, size) {
	for (let at = from; at < size; at += READ_BYTES) {
		const bytes = readInside(join(path, ".."), path, at, Math.min(size, at + READ_BYTES));
		if (!bytes) return -1;
		const i = bytes.indexOf(0x0a);
		if (i >= 0) return at + i;
	}
	return -1;
}

/** supervisor.log's new lines: who answered which row's question. @param {Db} db @param {string} storeRoot @param {Ops} ops */
function indexSupervisorLog(db, storeRoot, ops) {
	const path = join(storeRoot, SUPERVISOR_LOG);
	let stat;
	try {
		stat = lstatSync(path);
	} catch {
		return true;
	}
	if (!stat.isFile()) return true;
	let offset = Number(getState(db, "supervisor_offset") ?? 0);
	if (String(stat.ino) !== getState(db, "supervisor_ino") || stat.size < offset) offset = 0;
	if (offset >= stat.size) return true;
	const bytes = readInside(storeRoot, path, offset, stat.size);
	if (!bytes) return true;
	const end = bytes.lastIndexOf(0x0a);
	if (end < 0) return true;
	db.exec("BEGIN");
	try {
		if (offset === 0)
			db.exec(
				`DELETE FROM docs WHERE rowid IN (SELECT id FROM pieces WHERE kind = ${SUPERVISOR}); DELETE FROM pieces WHERE kind = ${SUPERVISOR};`,
			);
		for (const line of bytes.subarray(0, end).toString("utf8").split("\n")) {
			let value;
			try {
				value = JSON.parse(line);
			} catch {
				continue;
			}
			const found = supervisorPieces(value);
			if (found && isValidId(found.row)) addPieces(ops, found.row, SUPERVISOR, found.pieces);
		}
		setState(db, "supervisor_offset", offset + end + 1);
		setState(db, "supervisor_ino", stat.ino);
		db.exec("COMMIT");
	} catch (error) {
		if (db.isTransaction) db.exec("ROLLBACK");
		throw error;
	}
	return true;
}
