// Reading the index (search-index.mjs): a parsed query (query-parse.mjs) as hits, one per row, newest first,
// each saying where it matched and a snippet. Opens the index read-only; never writes.
import { lstatSync } from "node:fs";
import { indexPaths, SCHEMA_VERSION } from "./search-index.mjs";
import { loadSqlite } from "./sqlite.mjs";
import { cleanLine, MARK_CLOSE, MARK_OPEN, splitSnippet } from "./text.mjs";

/**
 * @typedef {object} SearchHit
 * @property {string} rowId
 * @property {string} name
 * @property {string} state
 * @property {string} place
 * @property {string} preset
 * @property {boolean} archived
 * @property {number} activeAt
 * @property {string[]} fields   where it matched: "prompt", "text", "tool output", "question"...
 * @property {{ text: string, matches: Array<[number, number]> }} [snippet]   the newest match's words
 */

/** Matching pieces are read newest first, this many at a time, until the query has its rows. */
const PAGE_PIECES = 400;
/** At most this many in all: a word in every piece of a big store does not read them all. */
const MAX_PIECES = 8000;

/** @typedef {import("node:sqlite").DatabaseSync} Db */

/** The index for reading, or undefined when there is none (or of another version). @param {string} storeRoot @returns {Promise<Db | undefined>} */
export async function openReader(storeRoot) {
	const { file } = indexPaths(storeRoot);
	try {
		lstatSync(file);
	} catch {
		return undefined;
	}
	const { DatabaseSync } = await loadSqlite();
	const db = new DatabaseSync(file, { readOnly: true });
	try {
		db.exec("PRAGMA busy_timeout = 2000");
		const version = db.prepare("PRAGMA user_version").get();
		if (Number(version?.user_version) !== SCHEMA_VERSION) {
			db.close();
			return undefined;
		}
		return db;
	} catch (error) {
		db.close();
		throw error;
	}
}

/** A LIKE pattern matching values that start with `prefix`. @param {string} prefix */
const likePrefix = (prefix) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** @param {import("./query-parse.mjs").ParsedQuery} query */
function rowFilters(query) {
	/** @type {string[]} */
	const where = [];
	/** @type {Array<string | number>} */
	const params = [];
	if (query.since !== undefined) {
		where.push("r.active_at >= ?");
		params.push(query.since);
	}
	if (query.states.length > 0) {
		where.push(`r.state IN (${query.states.map(() => "?").join(", ")})`);
		params.push(...query.states);
	}
	/** @param {string} column @param {string[]} prefixes */
	const anyPrefix = (column, prefixes) => {
		if (prefixes.length === 0) return;
		where.push(`(${prefixes.map(() => `${column} LIKE ? ESCAPE '\\'`).join(" OR ")})`);
		params.push(...prefixes.map(likePrefix));
	};
	anyPrefix("r.place", query.on);
	anyPrefix("r.preset", query.presets);
	if (query.files.length > 0) {
		where.push(
			`EXISTS (SELECT 1 FROM files f WHERE f.row_id = r.row_id AND (${query.files.map(() => "substr(f.path, 1, ?) = ?").join(" OR ")}))`,
		);
		for (const file of query.files) params.push(file.length, file);
	}
	return { where, params };
}

/** @param {Record<string, unknown>} row @returns {SearchHit} */
function hitOf(row) {
	return {
		rowId: String(row.row_id),
		name: cleanLine(row.name),
		state: String(row.state ?? ""),
		place: cleanLine(row.place),
		preset: cleanLine(row.preset),
		archived: Number(row.archived) === 1,
		activeAt: Number(row.active_at ?? 0),
		fields: [],
	};
}

/**
 * The rows a query finds, at most `limit`, the most recently active first.
 * @param {Db} db @param {import("./query-parse.mjs").ParsedQuery} query @param {{ limit?: number }} [options]
 * @returns {SearchHit[]}
 */
export function queryIndex(db, query, options = {}) {
	const limit = options.limit ?? 50;
	const { where, params } = rowFilters(query);
	const columns = "r.row_id, r.name, r.state, r.place, r.preset, r.archived, r.active_at";
	if (!query.match) {
		const sql = `SELECT ${columns} FROM rows r ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY r.active_at DESC LIMIT ?`;
		return db
			.prepare(sql)
			.all(...params, limit)
			.map((row) => hitOf(row));
	}
	// The snippet comes with each piece: a query of its own per hit set the match up again each time, and a
	// prefix's merge of its words is most of a query's time (50 of them: 380 ms for zq1* at 100,000 rows).
	const sql = `SELECT docs.rowid AS piece, docs.field AS field,
		snippet(docs, 0, '${MARK_OPEN}', '${MARK_CLOSE}', '…', 16) AS s, ${columns} FROM docs JOIN rows r ON r.row_id = docs.row_id
		WHERE docs MATCH ? AND docs.rowid < ? ${where.map((w) => `AND ${w}`).join(" ")} ORDER BY docs.rowid DESC LIMIT ?`;
	const page = db.prepare(sql);
	/** @type {Map<string, SearchHit & { piece: number, s: unknown }>} */
	const byRow = new Map();
	let below = Number.MAX_SAFE_INTEGER;
	// The first page as many pieces as hits asked: a word once in each row needs no more, and each costs a snippet.
	let size = Math.min(PAGE_PIECES, Math.max(limit, 10));
	for (let read = 0; read < MAX_PIECES && byRow.size < limit; read += size, size = PAGE_PIECES) {
		const pieces = page.all(query.match, below, ...params, size);
		for (const row of pieces) {
			const id = String(row.row_id);
			below = Number(row.piece);
			let hit = byRow.get(id);
			if (!hit) {
				hit = { ...hitOf(row), piece: below, s: row.s };
				byRow.set(id, hit);
			}
			const field = String(row.field);
			if (!hit.fields.includes(field)) hit.fields.push(field);
		}
		if (pieces.length < size) break;
	}
	const hits = [...byRow.values()].sort((a, b) => b.activeAt - a.activeAt || b.piece - a.piece).slice(0, limit);
	return hits.map(({ piece: _piece, s, ...hit }) =>
		typeof s === "string" ? { ...hit, snippet: splitSnippet(s) } : hit,
	);
}
