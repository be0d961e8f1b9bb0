// A row's workspace on an ssh host goes with its local worktree: far/work-remove.mjs runs there, sent
// over ssh stdin (it needs no version of our files on the host). When that cannot be done the row's
// local worktree still goes, and the sentence says where the host's copy stays and why.
import { runFarProgram } from "./ssh-far.mjs";
import { sshOf } from "./ssh-transport.mjs";

/**
 * @param {import("./ssh-transport.mjs").SshTargetConfig} target @param {{ storeDir: string, rowId: string }} context
 * @returns {Promise<{ ok: boolean, text: string }>}
 */
export async function removeSshWork(target, { storeDir, rowId }) {
	try {
		const done = /** @type {{ path: string, removed: boolean }} */ (
			await runFarProgram(sshOf(target, storeDir), "work-remove.mjs", "removeWork", [target.dir, rowId])
		);
		return {
			ok: true,
			text: done.removed
				? `removed its workspace on ${target.name} too (${target.host}:${done.path})`
				: `${target.name} had no workspace of it left`,
		};
	} catch (error) {
		return {
			ok: false,
			text: `its workspace on ${target.name} stays at ${target.host}:${target.dir}/work/${rowId}: ${error instanceof Error ? error.message : String(error)}`,
		};
	}
}
