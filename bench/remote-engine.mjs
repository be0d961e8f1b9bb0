// A container target on a remote engine against local rows and a local container target (issue #25):
// dispatch -> first model request through the board, rounds interleaved so load drifts hit every kind,
// one discarded warm-up round first (it makes the station and copies our files in). The remote engine
// is podman's API service run rootless as a second user behind its own sshd on 127.0.0.1
// (test-support/remote-engine.ts): every engine call crosses ssh. Also: what `targets check` costs on a
// fresh station, and a row's git round trip (its whole run: push of the base, fetch-back at the end).
// Needs root, sshd, podman and uidmap. Run with --experimental-strip-types (bench/run-all.mjs does).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir } from "../test-support/model-server.ts";
import { PI_CLI, waitFor } from "../test-support/pi-harness.ts";
import { remoteEngineMissing, startRemotePodman } from "../test-support/remote-engine.ts";
import { podmanMissing, sshdMissing } from "../test-support/requires.ts";
import { load, spread } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const missing = sshdMissing() ?? podmanMissing() ?? remoteEngineMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	process.exit(0);
}
const engine = await startRemotePodman();
const root = mkdtempSync(join(tmpdir(), "pab-bench-engine-"));
const model = await startModelServer({ script: { rules: [], fallback: [{ text: "ok" }] } });
try {
	const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
	process.env.PI_CODING_AGENT_DIR = writeAgentDir(model, join(root, "agent"));
	const env = { ...process.env, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" };
	const board = createBoardService({
		storeDir: join(root, "store"),
		piCommand: [process.execPath, PI_CLI],
		maxConcurrent: 8,
		env,
	});
	await board.targets.add("far", {
		kind: "container",
		engine: "podman",
		image: engine.image,
		engineHost: engine.url,
		engineIdentity: engine.identity,
		network: "host",
	});
	await board.targets.add("box", { kind: "container", engine: "podman", image: engine.image, network: "host" });
	const checkStarted = Date.now();
	const check = await board.targets.check("far");
	console.log(
		`targets check on a fresh station: ${((Date.now() - checkStarted) / 1000).toFixed(1)} s (${check.items.every((i) => i.ok) ? "ok" : "NOT ok"})`,
	);
	await board.targets.check("box");

	let n = 0;
	const kinds = /** @type {const} */ (["local", "box", "far"]);
	/** @type {Record<string, number[]>} */
	const first = Object.fromEntries(kinds.map((k) => [k, []]));
	/** @type {Record<string, number[]>} */
	const whole = Object.fromEntries(kinds.map((k) => [k, []]));
	for (let round = 0; round <= RUNS; round++) {
		for (const kind of kinds) {
			n += 1;
			const prompt = `BENCH-${n}`;
			const started = Date.now();
			const row = await board.dispatch({ prompt, cwd: repo, ...(kind === "local" ? {} : { target: kind }) });
			const request = await model.waitForRequest((r) => r.prompt === prompt, prompt, 180_000);
			await waitFor(
				async () => {
					const now = await board.get(row.id);
					return now && !now.alive && now.state === "completed" ? now : undefined;
				},
				`row ${row.id} to complete`,
				180_000,
			);
			if (round === 0) continue;
			first[kind]?.push(request.at - started);
			whole[kind]?.push(Date.now() - started);
		}
	}
	const names = { local: "local", box: "container, local engine", far: "container, remote engine (ssh)" };
	console.log("dispatch -> first model request");
	for (const kind of kinds) console.log(`  ${names[kind].padEnd(32)} ${spread(first[kind] ?? [])}`);
	console.log("dispatch -> completed (fetched back)");
	for (const kind of kinds) console.log(`  ${names[kind].padEnd(32)} ${spread(whole[kind] ?? [])}`);
	console.log(load());
} finally {
	await model.close();
	await engine.cleanup();
	rmSync(root, { recursive: true, force: true });
}
