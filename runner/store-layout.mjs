// Where a row's files live, derived from the store root and ids alone. The runner, the queue and the
// extension build every path this way and never from a path read out of a file: a store file may be
// planted or stale, and must not be able to send a write (or a start) anywhere else.
import { join } from "node:path";

/** Ids become path segments under the store: letters, digits, "-" and "_" only. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** @param {unknown} id @returns {id is string} */
export function isValidId(id) {
	return typeof id === "string" && ID_PATTERN.test(id);
}

/** @param {string} root @param {string} rowId */
export const rowDirOf = (root, rowId) => join(root, "rows", rowId);

/** @param {string} root @param {string} rowId @param {string} runId */
export const runDirOf = (root, rowId, runId) => join(root, "rows", rowId, "runs", runId);

/** @param {string} root @param {string} rowId */
export const sessionFileOf = (root, rowId) => join(root, "sessions", `${rowId}.jsonl`);
