// Our worker-side files (far/package-files.mjs) onto a far side at <dir>/pkg/<version>, one routine for
// every kind that has a far side: an ssh host and a remote engine's station differ only in how a tar of
// the files gets there and how a far program runs (each kind's FarSide); the steps and their safety are
// far/far-place.mjs, run there. Nothing is downloaded there.
import { randomBytes } from "node:crypto";
import { shippedFiles } from "../far/package-files.mjs";

/**
 * @typedef {object} FarSide
 * @property {(file: string, fn: string, args: unknown[]) => Promise<unknown>} program  a far/ program's function run there
 * @property {(root: string, files: string[], dest: string) => Promise<void>} copyIn  a tar of `files` under `root` unpacked at `dest` (made private first)
 */

/**
 * @param {FarSide} far @param {{ dir: string, version: string, root: string }} place
 * @returns {Promise<"installed" | "present">}
 */
export async function installPackage(far, { dir, version, root }) {
	const final = `${dir}/pkg/${version}`;
	if ((await far.program("far-place.mjs", "pkgPresent", [final])) === true) return "present";
	const incoming = `${dir}/pkg/.incoming-${version}-${randomBytes(4).toString("hex")}`;
	await far.copyIn(root, shippedFiles(root), incoming);
	const outcome = await far.program("far-place.mjs", "placePkg", [incoming, final]);
	if (outcome !== "installed" && outcome !== "present")
		throw new Error(`install into ${final} answered ${JSON.stringify(outcome).slice(0, 100)}`);
	return outcome;
}
