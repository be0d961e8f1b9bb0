// A real worker's streamed reply of numbered words ("word0 word1 ..."), measured from each chunk the runner
// received (events.jsonl, `at`) to the first time a screen showed that far: the board's and the web page's.
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** How far into `words` a screen's text reaches: the end of the last "wordN" it shows. @param {string} text @param {string} words */
export function reach(text, words) {
	const last = [...text.matchAll(/word(\d+)/g)].at(-1);
	return last ? words.indexOf(`word${last[1]} `) + last[0].length : 0;
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
