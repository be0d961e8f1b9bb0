// A row's workspace at its target goes when its local worktree (the mirror) is removed: each kind
// removes what it made there for the row. What cannot be removed is said with where it stays.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { controlPathFor } from "./ssh/ssh-transport.mjs";

/**
 * @param {import("./driver.mjs").TargetSnapshot} target the target the row ran on (its run's snapshot)
 * @param {{ storeDir: string, rowId: string }} where
 * @returns {Promise<{ ok: boolean, text: string }>} one sentence for the user
 */
export async function removeTargetWork(target, { storeDir, rowId }) {
	if (target.kind === "ssh") {
		const ssh = { host: target.host, ...(target.sshConfig ? { sshConfig: target.sshConfig } : {}), controlPath: controlPathFor(join(storeDir, "targets", target.name)) };
		const place = `${target.host}:${target.dir}/work/${rowId}`;
		try {
			const { runFarProgram } = await import("./ssh/ssh-program.mjs");
			const done = /** @type {{ path: string, removed: boolean }} */ (await runFarProgram(ssh, "work-remove.mjs", "removeWork", [target.dir, rowId]));
			return { ok: true, text: done.removed ? `removed its workspace on ${target.name} too (${target.host}:${done.path})` : `${target.name} had no workspace of it left` };
		} catch (error) {
			return { ok: false, text: `its workspace on ${target.name} stays at ${place}: ${error instanceof Error ? error.message : String(error)}` };
		}
	}
	// A container's workspace is a clone on this machine; its .git is the agent's, so no git runs in it.
	const path = join(storeDir, "targets", target.name, "work", rowId);
	try {
		rmSync(path, { recursive: true, force: true });
		return { ok: true, text: `removed its container workspace too (${path})` };
	} catch (error) {
		return { ok: false, text: `its container workspace stays at ${path}: ${error instanceof Error ? error.message : String(error)}` };
	}
}
