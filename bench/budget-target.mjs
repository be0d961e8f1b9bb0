// How close a budget holds, on this machine, on an ssh target over loopback (sshd on 127.0.0.1, a second
// Unix user) and on a podman container target (when podman is there), through the board as a user dispatches: each run has a row budget (a different one each time,
// 15-token requests), and is measured when it pauses: the tokens past the limit, and the model requests
// past the one that crossed it (there should be none). Also what the turn-end hold costs between turns: a
// worker's turn_end (its events) to the next model request, on each. Needs root and sshd. Run:
// node --experimental-strip-types bench/budget-target.mjs   (BENCH_RUNS runs of each, default 10)
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir } from "../test-support/model-server.ts";
import { PI_CLI, waitFor } from "../test-support/pi-harness.ts";
import { check } from "../runner/kinds/container/container-transport.mjs";
import { podmanMissing, sshdMissing } from "../test-support/requires.ts";
import { startSshHost } from "../test-support/sshd.ts";
import { removeContainersOfStore } from "../test-support/target-helpers.ts";
import { ensureWorkerImage } from "../test-support/worker-image.ts";
import { load, spread } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const STEPS = 12;
const TOKENS_PER_REQUEST = 15;
const missing = sshdMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	process.exit(0);
}

const root = mkdtempSync(join(tmpdir(), "pab-bench-budget-"));
const steps = [
	...Array.from({ length: STEPS }, (_, i) => ({ toolCall: { name: "bash", args: { command: `echo ${i}` } } })),
	{ text: "done" },
];
const model = await startModelServer({ script: { rules: [{ match: "BENCH", steps }] } });
const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
const agentDir = writeAgentDir(model, join(root, "agent"));
// A container run's pi home is made from the board's pi agent dir.
process.env.PI_CODING_AGENT_DIR = agentDir;
const host = await startSshHost();
host.user.writePiConfig({ models: model.modelsJson(), auth: model.authJson(), settings: model.settingsJson() });
const board = createBoardService({
	storeDir: join(root, "store"),
	piCommand: [process.execPath, PI_CLI],
	maxConcurrent: 4,
	env: {
		...process.env,
		PI_CODING_AGENT_DIR: agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
	},
});
await board.targets.add("lo", { kind: "ssh", host: host.alias, sshConfig: host.configFile, max: 4 });
const installed = await board.targets.check("lo", { install: true });
if (!installed.ok) throw new Error(`target check failed: ${JSON.stringify(installed.items.filter((i) => !i.ok))}`);
const podman = podmanMissing();
if (!podman) {
	const image = (await ensureWorkerImage()).tag;
	await board.targets.add("ctr", { kind: "container", engine: "podman", image, network: "host", max: 4 });
	await check(
		{ kind: "container", name: "ctr", engine: "podman", image, network: "host", env: [], max: 4 },
		{ storeDir: join(root, "store"), agentDir },
	);
} else console.log(`container target skipped: ${podman}`);

let n = 0;
/** @param {string | undefined} target @param {number} limit */
async function oneRun(target, limit) {
	n += 1;
	const prompt = `BENCH-${n}`;
	const row = await board.dispatch({ prompt, cwd: repo, budget: { tokens: limit }, ...(target ? { target } : {}) });
	const paused = await waitFor(
		async () => {
			const r = await board.get(row.id);
			return r?.state === "needs_input" && r.budget?.paused ? r : undefined;
		},
		`${prompt} to pause`,
		180_000,
		20,
	);
	// Settled a moment: a request past the pause would show in the model's log.
	await new Promise((resolve) => setTimeout(resolve, 2000));
	const requests = model.requests().filter((r) => r.prompt === prompt);
	const crossing = Math.ceil(limit / TOKENS_PER_REQUEST);
	const ends = readFileSync(join(paused.runDir ?? "", "events.jsonl"), "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line))
		.filter((event) => event.type === "turn_end")
		.map((event) => event.at);
	// A turn's end -> the next request (the hold, then pi's next call).
	const gaps = ends.slice(0, requests.length - 1).map((at, i) => (requests[i + 1]?.at ?? at) - at);
	await board.stop(row.id);
	return { past: (paused.budget?.spent ?? 0) - limit, extra: requests.length - crossing, gaps };
}

/** @param {string | undefined} target */
async function series(target) {
	await oneRun(target, 100);
	const past = [];
	const extra = [];
	const gaps = [];
	for (let i = 0; i < RUNS; i++) {
		const result = await oneRun(target, 31 + 13 * i);
		past.push(result.past);
		extra.push(result.extra);
		gaps.push(...result.gaps);
	}
	return { past, extra, gaps };
}

console.log(load());
for (const [name, target] of /** @type {[string, string | undefined][]} */ ([
	["this machine", undefined],
	["ssh target", "lo"],
	...(podman ? [] : [["podman container target", "ctr"]]),
])) {
	const { past, extra, gaps } = await series(target);
	console.log(
		`${name}: tokens past the limit at the pause ${spread(past, "tokens")}, max ${Math.max(...past)} (one request is ${TOKENS_PER_REQUEST}); requests past the crossing one: max ${Math.max(...extra)}; turn_end -> next request ${spread(gaps)}`,
	);
}
console.log(load());
if (!podman) removeContainersOfStore(join(root, "store"));
await host.cleanup();
await model.close();
rmSync(root, { recursive: true, force: true });
process.exit(0);
