// The link's driver for an ssh target: host-agent.mjs on the host (agent-driver.mjs), over the
// target's one multiplexed connection (ssh-transport.mjs), the host's repository mirror reached by git
// over the same master; the board's worker-side files are copied over when the host lacks this version.
import { join } from "node:path";
import { agentDriver } from "../../link/agent-driver.mjs";
import { cachedPackageVersion } from "../../far/package-files.mjs";
import { installOverSsh } from "./pkg-install.mjs";
import { sshMirrorRemote, sshTransport } from "./ssh-far.mjs";
import { sshOf } from "./ssh-transport.mjs";

/**
 * @param {import("./ssh-transport.mjs").SshTargetConfig} target
 * @param {{ storeDir: string, hooks?: import("../../link/driver.mjs").TargetHooks }} context
 * @returns {import("../../link/driver.mjs").TargetDriver}
 */
export function sshDriver(target, context) {
	const ssh = {
		...sshOf(target, context.storeDir),
		dir: target.dir,
		pkgVersion: cachedPackageVersion(join(context.storeDir, "targets", "pkg-version.json")),
	};
	return agentDriver(
		{
			name: target.name,
			dir: target.dir,
			...(target.pi ? { pi: target.pi } : {}),
			transport: sshTransport(ssh),
			remote: (repoKey) => sshMirrorRemote(ssh, repoKey),
			install: () => installOverSsh(ssh, target.dir),
		},
		context.hooks,
	);
}
