/**
 * Headless output, written whole. pi's print mode leaves fd 1 non-blocking (libuv opened the pipe),
 * so one writeSync of a long table wrote only what the pipe had room for (64 KiB) and the rest was
 * lost: `pi -p "/agent-board list --all" | wc -l` counted 2,114 of 5,001 lines; into a file it was
 * whole. Every byte is written here, waiting while the reader catches up, as a blocking write would.
 */
import { writeSync } from "node:fs";

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `text` to `fd`; a reader that went away (EPIPE: `| head`) ends it quietly. */
export function writeWhole(fd: number, text: string): void {
	const bytes = Buffer.from(text);
	let done = 0;
	while (done < bytes.length) {
		try {
			done += writeSync(fd, bytes, done);
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code;
			if (code === "EPIPE") return;
			if (code !== "EAGAIN") throw error;
			// The pipe is full: give the reader a moment (synchronously, like a blocking write).
			Atomics.wait(pause, 0, 0, 2);
		}
	}
}
