// A far run's events.jsonl as follow reads it: in chunks from where it stopped, split on "\n" only,
// never a whole line held past MAX_EVENT_LINE_BYTES. Lines whose seq the link already has are passed
// over; what the runner cannot have written (a line over the limit, a line that is not a JSON object
// with a seq, a seq out of order after new ones were sent) is skipped and counted, and the counts are
// said in one flag (the link's copy lacks them; the row says so at the end).
import { MAX_EVENT_LINE_BYTES } from "./frames.mjs";
import { readInside, plainFileSize } from "../store/safe-read.mjs";
import { sizeWords } from "./session-travel.mjs";

const CHUNK_BYTES = 1024 * 1024;

/**
 * @param {{ runDir: string, path: string, fromSeq: number, send: (seq: number, line: string, type: string) => void, flag: (reason: string, count: number) => void }} options
 */
export function eventReader({ runDir, path, fromSeq, send, flag }) {
	let lastSeq = fromSeq;
	/** Where the next read starts, and where the line being put together began. */
	let offset = 0;
	let lineStart = 0;
	/** @type {Buffer[]} */
	let partial = [];
	let partialBytes = 0;
	let skipping = false;
	const skipped = { long: 0, order: 0, shape: 0 };
	let said = "";

	/** @param {string} line */
	function take(line) {
		/** @type {unknown} */
		let value;
		try {
			value = JSON.parse(line);
		} catch {
			value = undefined;
		}
		const record = /** @type {Record<string, unknown> | undefined} */ (
			value && typeof value === "object" && !Array.isArray(value) ? value : undefined
		);
		const seq = record?.seq;
		if (typeof seq !== "number" || !Number.isSafeInteger(seq)) {
			skipped.shape += 1;
			return;
		}
		if (seq <= lastSeq) {
			// Before anything new was sent these are the lines the link has; after, a line out of order.
			if (lastSeq > fromSeq) skipped.order += 1;
			return;
		}
		lastSeq = seq;
		send(seq, line, typeof record?.type === "string" ? record.type : "");
	}

	function report() {
		const parts = [];
		if (skipped.long) parts.push(`${skipped.long} line(s) over ${sizeWords(MAX_EVENT_LINE_BYTES)}`);
		if (skipped.order) parts.push(`${skipped.order} line(s) out of order`);
		if (skipped.shape) parts.push(`${skipped.shape} line(s) that are not events`);
		const words = parts.length ? `${path} on the target: skipped ${parts.join(", ")}` : "";
		if (words && words !== said) flag(words, skipped.long + skipped.order + skipped.shape);
		said = words;
	}

	return {
		get lastSeq() {
			return lastSeq;
		},
		/**
		 * Reads at most `budget` more bytes; returns whether more are there.
		 * @param {number} budget
		 */
		read(budget) {
			const size = plainFileSize(path);
			if (size < 0) return false;
			// Cut back (a runner's torn append on a full disk): read again from the line that was torn.
			if (size < offset) {
				offset = lineStart;
				partial = [];
				partialBytes = 0;
				skipping = false;
				if (size < offset) offset = lineStart = 0;
			}
			for (let read = 0; offset < size && read < budget; ) {
				const bytes = readInside(runDir, path, offset, Math.min(size, offset + CHUNK_BYTES));
				if (!bytes || bytes.length === 0) break;
				let start = 0;
				for (let end = bytes.indexOf(0x0a); end >= 0; end = bytes.indexOf(0x0a, start)) {
					const piece = bytes.subarray(start, end);
					if (skipping || partialBytes + piece.length > MAX_EVENT_LINE_BYTES) skipped.long += 1;
					else if (partialBytes + piece.length > 0) take(Buffer.concat([...partial, piece]).toString("utf8"));
					partial = [];
					partialBytes = 0;
					skipping = false;
					start = end + 1;
					lineStart = offset + start;
				}
				if (start < bytes.length && !skipping) {
					const rest = bytes.subarray(start);
					if (partialBytes + rest.length > MAX_EVENT_LINE_BYTES) {
						partial = [];
						partialBytes = 0;
						skipping = true;
					} else {
						partial.push(Buffer.from(rest));
						partialBytes += rest.length;
					}
				}
				offset += bytes.length;
				read += bytes.length;
			}
			report();
			return offset < size;
		},
	};
}
