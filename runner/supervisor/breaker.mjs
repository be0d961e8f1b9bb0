// The breaker: a row whose questions came to the person N times in a row (3 unless policy.json's
// supervisor.breaker says otherwise) is not answered for any more until the person answers one of its
// questions. A row that keeps asking what the supervisor may not answer is stuck or being steered
// somewhere; the person looks before anything more is answered for them. Counted from the row's lines in
// <store>/supervisor.log, so it holds across the row's runs. Pure.

export const DEFAULT_BREAKER = 3;

/**
 * Questions of this row that came to the person in a row, newest last, counted back to the last one
 * answered (by the supervisor, or by the person: a "you-answered" line).
 * @param {readonly import("./supervisor-log.mjs").SupervisorLine[]} lines @param {string} rowId
 */
export function escalatedInARow(lines, rowId) {
	let count = 0;
	for (let i = lines.length - 1; i >= 0; i--) {
		const line = lines[i];
		if (line?.row !== rowId) continue;
		if (line.decision !== "asked-you") break;
		count++;
	}
	return count;
}

/**
 * The note when the breaker is open, or undefined.
 * @param {readonly import("./supervisor-log.mjs").SupervisorLine[]} lines @param {string} rowId @param {number} [limit]
 */
export function breakerNote(lines, rowId, limit = DEFAULT_BREAKER) {
	const count = escalatedInARow(lines, rowId);
	return count >= limit
		? `asked you because: this row's last ${count} questions came to you; nothing is answered for it until you answer one`
		: undefined;
}
