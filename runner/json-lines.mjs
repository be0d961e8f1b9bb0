// pi's stdout as the runner reads it: one JSON event per line (split on "\n" only). Most lines are
// small and go to JSON.parse whole. A line past BIG_LINE (message_end, turn_end, agent_end of a long
// answer carry the whole text, megabytes of it) is parsed as it arrives by ClippedJson, which keeps
// at most MAX_STRING characters of each string: what the runner keeps of an event is a preview, so its
// memory stays bounded however long the answer, instead of holding the line, its parse and their copies.

export const BIG_LINE = 256 * 1024;
export const MAX_STRING = 64 * 1024;

const ESCAPES = /** @type {Record<string, string>} */ ({
	'"': '"',
	"\\": "\\",
	"/": "/",
	b: "\b",
	f: "\f",
	n: "\n",
	r: "\r",
	t: "\t",
});

/** A streaming JSON parser for one value; strings longer than `maxString` keep their start only. */
export class ClippedJson {
	/** @param {number} [maxString] */
	constructor(maxString = MAX_STRING) {
		this.maxString = maxString;
		/** @type {Array<{ value: Record<string, unknown> | unknown[], key: string | undefined }>} */
		this.stack = [];
		/** @type {unknown} */
		this.root = undefined;
		this.hasRoot = false;
		/** @type {{ parts: string[], length: number, escape: string | undefined } | undefined} */
		this.string = undefined;
		/** A number or literal being read. @type {string | undefined} */
		this.word = undefined;
		this.failed = false;
	}

	/** @param {string} chunk */
	push(chunk) {
		let i = 0;
		while (i < chunk.length && !this.failed) i = this.string ? this.readString(chunk, i) : this.readToken(chunk, i);
	}

	/** The value, or undefined when the text was not one JSON value. */
	end() {
		if (this.word !== undefined) this.endWord();
		return this.failed || this.string || this.stack.length > 0 || !this.hasRoot ? undefined : this.root;
	}

	/** @param {string} chunk @param {number} i */
	readToken(chunk, i) {
		const char = chunk[i] ?? "";
		if (this.word !== undefined) {
			if (/[0-9A-Za-z.+-]/.test(char)) {
				this.word += char;
				return i + 1;
			}
			this.endWord();
		}
		if (char === " " || char === "\t" || char === "\n" || char === "\r") return i + 1;
		if (char === "{" || char === "[") this.stack.push({ value: char === "{" ? {} : [], key: undefined });
		else if (char === "}" || char === "]") {
			const done = this.stack.pop();
			if (!done) this.failed = true;
			else this.value(done.value);
		} else if (char === '"') this.string = { parts: [], length: 0, escape: undefined };
		else if (char === ":" || char === ",") return i + 1;
		else if (/[-0-9tfn]/.test(char)) this.word = char;
		else this.failed = true;
		return i + 1;
	}

	/** @param {string} chunk @param {number} i */
	readString(chunk, i) {
		const string = /** @type {NonNullable<ClippedJson["string"]>} */ (this.string);
		if (string.escape !== undefined) {
			string.escape += chunk[i];
			const escaped = string.escape;
			if (escaped[0] === "u") {
				if (escaped.length < 5) return i + 1;
				this.addText(String.fromCharCode(Number.parseInt(escaped.slice(1), 16)));
			} else if (ESCAPES[escaped] !== undefined) this.addText(ESCAPES[escaped] ?? "");
			else this.failed = true;
			string.escape = undefined;
			return i + 1;
		}
		let j = i;
		while (j < chunk.length && chunk[j] !== '"' && chunk[j] !== "\\") j++;
		if (j > i) this.addText(chunk.slice(i, j));
		if (j >= chunk.length) return j;
		if (chunk[j] === "\\") {
			string.escape = "";
			return j + 1;
		}
		this.string = undefined;
		// One flat copy: the parts are slices of the chunks they came in, which they would keep alive.
		this.value(JSON.parse(JSON.stringify(string.parts.join(""))));
		return j + 1;
	}

	/** @param {string} text */
	addText(text) {
		const string = /** @type {NonNullable<ClippedJson["string"]>} */ (this.string);
		const room = this.maxString - string.length;
		if (room <= 0) return;
		const kept = text.length > room ? text.slice(0, room) : text;
		string.parts.push(kept);
		string.length += kept.length;
	}

	endWord() {
		const word = String(this.word ?? "");
		this.word = undefined;
		if (word === "true" || word === "false" || word === "null")
			this.value(word === "true" ? true : word === "false" ? false : null);
		else {
			const number = Number(word);
			if (Number.isNaN(number)) this.failed = true;
			else this.value(number);
		}
	}

	/** @param {unknown} value */
	value(value) {
		const top = this.stack[this.stack.length - 1];
		if (!top) {
			this.root = value;
			this.hasRoot = true;
		} else if (Array.isArray(top.value)) top.value.push(value);
		else if (top.key === undefined) {
			if (typeof value === "string") top.key = value;
			else this.failed = true;
		} else {
			top.value[top.key] = value;
			top.key = undefined;
		}
	}
}

/** Splits pi's stdout into events: small lines parsed whole, big ones as they arrive, clipped. */
export class JsonLines {
	constructor() {
		/** @type {string[]} */
		this.parts = [];
		this.length = 0;
		/** @type {ClippedJson | undefined} */
		this.big = undefined;
	}

	/** @param {string} chunk decoded text @returns {Record<string, unknown>[]} */
	push(chunk) {
		/** @type {Record<string, unknown>[]} */
		const events = [];
		let start = 0;
		for (let end = chunk.indexOf("\n"); end >= 0; end = chunk.indexOf("\n", start)) {
			this.add(chunk.slice(start, end));
			const event = this.endLine();
			if (event) events.push(event);
			start = end + 1;
		}
		if (start < chunk.length) this.add(start === 0 ? chunk : chunk.slice(start));
		return events;
	}

	/** The last line when the stream ended without a "\n". */
	flush() {
		return this.endLine();
	}

	/** @param {string} text */
	add(text) {
		if (this.big) return this.big.push(text);
		this.parts.push(text);
		this.length += text.length;
		if (this.length <= BIG_LINE) return;
		this.big = new ClippedJson();
		for (const part of this.parts) this.big.push(part);
		this.parts = [];
	}

	/** @returns {Record<string, unknown> | undefined} */
	endLine() {
		const big = this.big;
		const line = big ? "" : this.parts.join("");
		this.parts = [];
		this.length = 0;
		this.big = undefined;
		let value;
		if (big) value = big.end();
		else {
			const record = line.endsWith("\r") ? line.slice(0, -1) : line;
			if (!record.startsWith("{")) return undefined;
			try {
				value = JSON.parse(record);
			} catch {
				return undefined;
			}
		}
		return value !== null && typeof value === "object" && !Array.isArray(value)
			? /** @type {Record<string, unknown>} */ (value)
			: undefined;
	}
}
