/**
 * The prerequisite rule for tests that need something of the machine (sshd, podman, root): under
 * CI=true a missing prerequisite fails the test; elsewhere the test is skipped with the reason printed.
 * A probe returns undefined when everything is there, or the reason it is not.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

interface SkipContext {
	skip(note?: string): void;
}

/** Call first in a test: fails under CI, skips (with the reason printed) elsewhere. */
export function requires(ctx: SkipContext, missing: string | undefined): void {
	if (!missing) return;
	if (process.env.CI === "true") throw new Error(`prerequisite missing under CI=true: ${missing}`);
	console.warn(`skipped: ${missing}`);
	ctx.skip(missing);
}

function runs(command: string, args: string[]): string | undefined {
	try {
		execFileSync(command, args, { stdio: ["ignore", "ignore", "pipe"], timeout: 30_000 });
		return undefined;
	} catch (error) {
		const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
		return stderr || (error instanceof Error ? error.message : String(error));
	}
}

/** Root: creating a second Unix user and running sshd need it. */
export function rootMissing(): string | undefined {
	return process.getuid?.() === 0 ? undefined : "needs root (creates a Unix user, runs sshd)";
}

/** OpenSSH server and client (Debian: openssh-server, openssh-client) plus useradd. */
export function sshdMissing(): string | undefined {
	const root = rootMissing();
	if (root) return root;
	for (const path of ["/usr/sbin/sshd", "/usr/sbin/useradd", "/usr/sbin/userdel"]) {
		if (!existsSync(path)) return `${path} is missing (apt-get install openssh-server passwd)`;
	}
	const ssh = runs("ssh", ["-V"]);
	return ssh ? `ssh client not usable: ${ssh}` : undefined;
}

let podmanProbe: string | undefined | null = null;

/** podman that can run a container here (runc configured on hybrid cgroups, see .ci/run). */
export function podmanMissing(): string | undefined {
	if (podmanProbe !== null) return podmanProbe;
	const root = rootMissing();
	if (root) return (podmanProbe = root);
	const info = runs("podman", ["info", "--format", "{{.Host.OCIRuntime.Name}}"]);
	podmanProbe = info ? `podman is not usable: ${info} (apt-get install podman runc; see .ci/run for containers.conf)` : undefined;
	return podmanProbe;
}
