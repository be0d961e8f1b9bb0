// The one JSON-lines splitter: pi's stdout and both ends of the control channel. Lines end at "\n"
// only (JSON.stringify escapes "\n" inside strings; U+2028/U+2029 stay raw and are not line ends).

export class LineSplitter {
	/** @param {{ maxLine?: number }} [options] an unterminated line longer than maxLine is dropped (an endless line must not grow the reader without bound) */
	constructor(options = {}) {
		/** @type {string} */
		this.rest = "";
		this.maxLine = options.maxLine ?? Infinity;
	}

	/**
	 * Feed decoded text (from a stream with setEncoding("utf8"), so a multi-byte character is never cut).
	 * @param {string} chunk
	 * @returns {string[]} the complete, non-empty lines, without their "\n"
	 */
	push(chunk) {
		const parts = (this.rest + chunk).split("\n");
		this.rest = parts.pop() ?? "";
		if (this.rest.length > this.maxLine) this.rest = "";
		return parts.filter((line) => line.length > 0);
	}

	/** The unterminated tail, once the stream has ended. */
	flush() {
		const rest = this.rest;
		this.rest = "";
		return rest;
	}
}
