/** Filling a small file system to the last byte, for the full-disk tests (a tmpfs the test mounted). */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Writes filler files into `dir` until its file system refuses (ENOSPC); returns them. */
export function fillDisk(dir: string): string[] {
	const fillers: string[] = [];
	for (let size = 1024 * 1024; size >= 64; ) {
		const path = join(dir, `filler-${fillers.length}`);
		try {
			writeFileSync(path, Buffer.alloc(size, 1));
			fillers.push(path);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
			rmSync(path, { force: true });
			size = Math.floor(size / 2);
		}
	}
	return fillers;
}
