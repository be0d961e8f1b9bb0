// Placing files on a far side (an ssh host, a remote engine's station), run there over stdin by
// runFarProgram / runInStation: self-contained, node:* only. Our package lands at <dir>/pkg/<version>
// the same way on both: a copy arrives in a private incoming dir beside it, is marked complete and moved
// into place; a complete copy of that version is kept, one that landed while ours came included (two
// links to one host, or a `targets check --install` meanwhile: host-agents start from the one in place).
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";

/** Whether a complete copy is at `final`. @param {string} final */
export function pkgPresent(final) {
	return existsSync(`${final}/.complete`);
}

/**
 * Moves the copy at `incoming` to `final`, or drops it when a complete one is there already.
 * @param {string} incoming @param {string} final @returns {"installed" | "present"}
 */
export function placePkg(incoming, final) {
	if (existsSync(`${final}/.complete`)) {
		rmSync(incoming, { recursive: true, force: true });
		return "present";
	}
	writeFileSync(`${incoming}/.complete`, "");
	// An incomplete copy (an install that died half way) goes; a complete one never does.
	rmSync(final, { recursive: true, force: true });
	try {
		renameSync(incoming, final);
	} catch (error) {
		// One that landed between that look and the move: rename does not replace a directory with files.
		const code = /** @type {NodeJS.ErrnoException} */ (error).code;
		if ((code === "ENOTEMPTY" || code === "EEXIST") && existsSync(`${final}/.complete`)) {
			rmSync(incoming, { recursive: true, force: true });
			return "present";
		}
		throw error;
	}
	return "installed";
}

/** A private directory (and its parents) for a copy to arrive in. @param {string} path */
export function makePrivateDir(path) {
	mkdirSync(path, { recursive: true, mode: 0o700 });
	return true;
}

/** A tree gone (a row's previous pi home). @param {string} path */
export function removeTree(path) {
	rmSync(path, { recursive: true, force: true });
	return true;
}
