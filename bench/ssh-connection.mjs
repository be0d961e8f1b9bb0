// One command on an ssh target: over the target's warm master (ControlMaster, what the link uses)
// against a cold handshake (a new connection each time). Real sshd on 127.0.0.1 (test-support/sshd.ts,
// needs root), so this is the floor that every status read, inbox message and git fetch would pay.
// Run with --experimental-strip-types (bench/run-all.mjs does).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { controlPathFor, sshArgv, sshEnv } from "../runner/kinds/ssh/ssh-transport.mjs";
import { startSshHost } from "../test-support/sshd.ts";
import { sshdMissing } from "../test-support/requires.ts";
import { load, spread } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 15);

const missing = sshdMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	process.exit(0);
}

const host = await startSshHost();
try {
	const target = {
		host: host.alias,
		sshConfig: host.configFile,
		controlPath: controlPathFor(join(host.root, "target")),
	};
	/** @param {string[]} argv */
	const time = (argv) => {
		const started = process.hrtime.bigint();
		const result = spawnSync("ssh", argv, { encoding: "utf8", env: sshEnv() });
		if (result.status !== 0) throw new Error(`ssh failed: ${result.stderr}`);
		return Number(process.hrtime.bigint() - started) / 1e6;
	};
	const cold = [];
	for (let i = 0; i < RUNS; i++)
		cold.push(
			time([
				"-F",
				host.configFile,
				"-o",
				"BatchMode=yes",
				"-o",
				"ControlMaster=no",
				"-o",
				"ControlPath=none",
				host.alias,
				"true",
			]),
		);
	// The first command starts the master (ControlMaster=auto + ControlPersist); the rest reuse it.
	const first = time(sshArgv(target, ["true"]));
	const warm = [];
	for (let i = 0; i < RUNS; i++) warm.push(time(sshArgv(target, ["true"])));
	console.log(`ssh <alias> true, cold handshake:        ${spread(cold)}`);
	console.log(`ssh <alias> true, first (starts master): ${first.toFixed(1)} ms`);
	console.log(`ssh <alias> true, over the warm master:  ${spread(warm)}`);
	console.log(load());
	spawnSync("ssh", ["-F", host.configFile, "-o", `ControlPath=${target.controlPath}`, "-O", "exit", host.alias], {
		stdio: "ignore",
	});
} finally {
	await host.cleanup();
}
