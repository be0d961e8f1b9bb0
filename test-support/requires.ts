/**
 * A test's prerequisite (root, tmux, a mount, setpriv...). Missing under CI=true, the test fails: CI
 * must run everything. Missing elsewhere, the test is skipped with the reason printed. Never a
 * silent early return that passes.
 */
import { execFileSync } from "node:child_process";
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
		execFileSync(command, args, { stdio: ["ignore", "ignore", "pipe"] });
		return undefined;
	} catch (error) {
		return String((error as { stderr?: Buffer }).stderr ?? error).trim() || String(error);
	}
}
