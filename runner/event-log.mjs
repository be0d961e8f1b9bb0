// events.jsonl as the runner writes it: every worker event, compacted (compact-event.mjs), one line
// each, except streaming deltas. pi sends a delta of a few characters per line; logged one per line they
// made the log several times the text. Consecutive deltas of one kind are joined into one line
// (`deltas` says how many), written when another event comes, after FLUSH_MS, or at MAX_JOINED
// characters: the log stays about the size of the text. `seq` numbers the lines, 1, 2, 3...
import { compactEvent } from "./compact-event.mjs";

const FLUSH_MS = 250;
const MAX_JOINED = 64 * 1024;
const DELTA_KINDS = ["text_delta", "thinking_delta", "toolcall_delta"];

/** @typedef {{ seq: number, at: number, from: number, type: "message_update", update: string, delta: string, deltas: number }} JoinedDeltas */

export class EventLog {
	/** @param {(line: string) => void} write one line, "\n" included */
	constructor(write) {
		this.write = write;
		this.seq = 0;
		/** @type {JoinedDeltas | undefined} */
		this.pending = undefined;
		/** @type {NodeJS.Timeout | undefined} */
		this.timer = undefined;
	}

	/** @param {Record<string, unknown>} event @param {number} at */
	add(event, at) {
		const update = /** @type {Record<string, unknown>} */ (event.assistantMessageEvent ?? {});
		if (
			event.type === "message_update" &&
			typeof update.delta === "string" &&
			DELTA_KINDS.includes(String(update.type))
		) {
			if (this.pending && this.pending.update !== update.type) this.flush();
			if (!this.pending) {
				this.pending = {
					seq: 0,
					at,
					from: at,
					type: "message_update",
					update: String(update.type),
					delta: "",
					deltas: 0,
				};
				this.timer = setTimeout(() => this.flush(), FLUSH_MS);
				this.timer.unref();
			}
			this.pending.delta += update.delta;
			this.pending.deltas += 1;
			this.pending.at = at;
			if (this.pending.delta.length >= MAX_JOINED) this.flush();
			return;
		}
		this.flush();
		this.seq += 1;
		this.write(`${JSON.stringify(compactEvent(event, this.seq, at))}\n`);
	}

	/** Writes the joined deltas waiting, if any (also when the stream ends). */
	flush() {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
		const pending = this.pending;
		if (!pending) return;
		this.pending = undefined;
		this.seq += 1;
		pending.seq = this.seq;
		this.write(`${JSON.stringify(pending)}\n`);
	}
}
