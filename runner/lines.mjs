// The one JSON-lines splitter: pi's stdout and both ends of the control channel. Lines end at "\n"
// only (JSON.stringify escapes "\n" inside strings; U+2028/U+2029 stay raw and are not line ends).
// A long line arrives in many chunks: they are kept as parts and joined once, when its "\n" comes
// (joining as they arrive copies the line again for every chunk).

export class LineSplitter {
	/** @param {{ maxLine?: number }} [options] a line longer than maxLine is dropped whole (an endless line must not grow the reader without bound) */
	constructor(options = {}) {
		/** @type {string[]} */
		this.parts = [];
		this.partsLength = 0;
		this.dropping = false;
		this.maxLine = options.maxLine ?? Infinity;
		/** Lines dropped for their length so far (a reader may say so). */
		this.dropped = 0;
	}

	/**
	 * Feed decoded text (from a stream with setEncoding("utf8"), so a multi-byte character is never cut).
	 * @param {string} chunk
	 * @returns {string[]} the complete, non-empty lines, without their "\n"
	 */
	push(chunk) {
		/** @type {string[]} */
		const lines = [];
		let start = 0;
		for (let end = chunk.indexOf("\n"); end >= 0; end = chunk.indexOf("\n", start)) {
			const piece = chunk.slice(start, end);
			const line = this.parts.length > 0 ? this.parts.join("") + piece : piece;
			if (this.dropping || line.length > this.maxLine) this.dropped++;
			else if (line.length > 0) lines.push(line);
			this.parts = [];
			this.partsLength = 0;
			this.dropping = false;
			start = end + 1;
		}
		const rest = start === 0 ? chunk : chunk.slice(start);
		if (rest.length > 0 && !this.dropping) {
			this.parts.push(rest);
			this.partsLength += rest.length;
			if (this.partsLength > this.maxLine) {
				this.parts = [];
				this.partsLength = 0;
				this.dropping = true;
			}
		}
		return lines;
	}

	/** The unterminated tail, once the stream has ended. */
	flush() {
		const rest = this.dropping ? "" : this.parts.join("");
		this.parts = [];
		this.partsLength = 0;
		this.dropping = false;
		return rest;
	}
}
