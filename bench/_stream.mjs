// A real worker's streamed reply of numbered words ("word0 word1 ..."), measured from each chunk the runner
// received (events.jsonl, `at`) to the first time a screen showed that far: the board's and the web page's.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/**
 * How far into `words` a screen's text reaches, exactly: from its next-to-last "wordN" on, as much as is the
 * reply's text, so a chunk that ends mid-word ("word56 wor") counts where it ends, not at an earlier word.
 * @param {string} text @param {string} words
 */
export function reach(text, words) {
	const plain = text.replace(ANSI, "");
	const found = [...plain.matchAll(/word(\d+)/g)];
	const from = found.at(-2)?.index ?? found.at(-1)?.index;
	if (from === undefined) return 0;
	// What follows the reply on the line (its age, tokens) is not in it: cut back to what is.
	for (let piece = plain.slice(from); piece.length > 0; piece = piece.slice(0, -1)) {
		const at = words.indexOf(piece);
		if (at >= 0) return at + piece.length;
	}
	return 0;
}

/**
 * Chunk -> screen latencies: for each streamed delta, the first sighting that shows at least that much.
 * @param {string} runDir @param {{ at: number, length: number }[]} seen
 */
export function chunkLatencies(runDir, seen) {
	const latencies = [];
	let length = 0;
	for (const text of readFileSync(join(runDir, "events.jsonl"), "utf8").split("\n")) {
		if (!text) continue;
		const event = JSON.parse(text);
		if (event.type === "message_start" && event.message?.role === "assistant") length = 0;
		if (event.type !== "message_update" || typeof event.delta !== "string") continue;
		length += event.delta.length;
		const hit = seen.find((s) => s.length >= length);
		if (hit) latencies.push(hit.at - event.at);
	}
	return latencies;
}
