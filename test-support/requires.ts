/**
 * A test's prerequisite (root, tmux, a mount, setpriv, sshd, podman...). Missing under CI=true, the test
 * fails: CI must run everything. Missing elsewhere, the test is skipped with the reason printed. Never a
 * silent early return that passes. A probe returns undefined when everything is there, or why it is not.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { TestContext } from "vitest";

/** `missing` is why the prerequisite is not there (falsy: it is). */
export function requires(ctx: TestContext, what: string, missing: string | false | undefined): void {
	if (!missing) return;
	const reason = `requires ${what}: ${missing}`;
	if (process.env.CI === "true") throw new Error(`${reason} (under CI=true a missing prerequisite fails the test)`);
	console.warn(`skipped: ${reason}`);
	ctx.skip(reason);
}

/** Why this process is not root, or undefined when it is. */
export function notRoot(): string | undefined {
	const uid = process.getuid?.();
	return uid === 0 ? undefined : `running as uid ${uid ?? "unknown"}, not root`;
}

/** Runs a command (mount, setpriv...); returns why it failed (its stderr), or undefined when it worked. */
export function commandFails(command: string, args: string[]): string | undefined {
	try {
		execFileSync(command, args, { stdio: ["ignore", "ignore", "pipe"], timeout: 30_000 });
		return undefined;
	} catch (error) {
		return String((error as { stderr?: Buffer }).stderr ?? error).trim() || String(error);
	}
}

/** OpenSSH server and client (Debian: openssh-server, openssh-client) plus useradd; root to run them. */
export function sshdMissing(): string | undefined {
	const root = notRoot();
	if (root) return `${root} (a second Unix user and sshd need root)`;
	for (const path of ["/usr/sbin/sshd", "/usr/sbin/useradd", "/usr/sbin/userdel"]) {
		if (!existsSync(path)) return `${path} is missing (apt-get install openssh-server passwd)`;
	}
	const ssh = commandFails("ssh", ["-V"]);
	return ssh ? `ssh client not usable: ${ssh}` : undefined;
}

let podmanProbe: string | undefined | null = null;

/** podman that can run a container here (runc configured on hybrid cgroups, see .ci/run). */
export function podmanMissing(): string | undefined {
	if (podmanProbe !== null) return podmanProbe;
	const root = notRoot();
	if (root) {
		podmanProbe = root;
		return root;
	}
	const info = commandFails("podman", ["info", "--format", "{{.Host.OCIRuntime.Name}}"]);
	podmanProbe = info
		? `podman is not usable: ${info} (apt-get install podman runc; see .ci/run for containers.conf)`
		: undefined;
	return podmanProbe;
}
