// Container targets against local runs, in one run (issue #16's bench): dispatch -> first model request
// through the board for a local row and a container row (the target's start cache prepared, as
// `targets check` leaves it), the same for a container started cold (no cache; the transport alone),
// and the memory of an idle run of each kind (its worker waiting on a held model response): local =
// runner + pi; container = the link + what runs in the container (--init, runner, pi) + conmon.
// Rounds interleave the kinds so load drifts hit all of them; one discarded warm-up round first.
// Needs root and podman. Run with --experimental-strip-types (bench/run-all.mjs does).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cacheRoot, ensureStartCache } from "../runner/kinds/container/container-cache.mjs";
import { startRun, wait } from "../runner/kinds/container/container-transport.mjs";
import { PACKAGE_ROOT, packageVersion } from "../runner/far/package-files.mjs";
import { repoKey } from "../runner/link/git-travel.mjs";
import { runProcesses } from "../runner/store/proc.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import { git, initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir } from "../test-support/model-server.ts";
import { PI_CLI, waitFor } from "../test-support/pi-harness.ts";
import { podmanMissing } from "../test-support/requires.ts";
import { ensureWorkerImage } from "../test-support/worker-image.ts";
import { load, pct, spread } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const missing = podmanMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	process.exit(0);
}
const root = mkdtempSync(join(tmpdir(), "pab-bench-ctr-"));
const store = join(root, "store");
const model = await startModelServer({ script: { rules: [], fallback: [{ text: "ok" }] } });
const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
const agentDir = writeAgentDir(model, join(root, "agent"));
process.env.PI_CODING_AGENT_DIR = agentDir;
const env = { ...process.env, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" };
const board = createBoardService({ storeDir: store, piCommand: [process.execPath, PI_CLI], maxConcurrent: 8, env });
const image = await ensureWorkerImage();
await board.targets.add("box", { kind: "container", engine: "podman", image: image.tag, network: "host" });
const cache = await ensureStartCache({
	engine: "podman",
	image: image.tag,
	cacheRoot: cacheRoot(store),
	storeDir: store,
	pkg: PACKAGE_ROOT,
	pkgVersion: packageVersion(),
	uid: 0,
	gid: 0,
});
console.log(
	`image ${image.built ? `built in ${(image.buildMs / 1000).toFixed(1)} s` : "cached"}; start cache ${cache.prepared ? `prepared in ${(cache.ms / 1000).toFixed(1)} s` : "ready"}`,
);

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let n = 0;

/** A row through the board, local or on the container target. @param {string | undefined} target */
function dispatch(target) {
	return async (/** @type {string} */ prompt) => {
		const started = Date.now();
		const row = await board.dispatch({ prompt, cwd: repo, ...(target ? { target } : {}) });
		const ended = () =>
			waitFor(
				async () => {
					const now = await board.get(row.id);
					return now && !now.alive && !["queued", "working"].includes(now.state) ? now : undefined;
				},
				`row ${row.id} to end`,
				120_000,
			);
		return { started, ended, runId: row.currentRunId ?? "", stop: () => board.stop(row.id) };
	};
}

/** The same container run without the start cache (the transport alone, as the link calls it). */
async function cold(/** @type {string} */ prompt) {
	n += 1;
	const rowId = `cold${n}`;
	const runId = `${rowId}-r`;
	const base = git(repo, "rev-parse", "HEAD");
	/** @type {import("../runner/kinds/container/container-transport.mjs").ContainerRun} */
	const run = {
		target: { kind: "container", name: "cold", engine: "podman", image: image.tag, network: "host", env: [], max: 8 },
		storeDir: store,
		rowId,
		runId,
		runDir: join(root, "cold", runId),
		sessionFile: join(root, "cold", `${rowId}.jsonl`),
		repo,
		worktree: join(root, "cold", rowId),
		base,
		subdir: "",
		agentDir,
		forwarded: {},
		config: { rowId, runId, repoKey: repoKey(repo), base, prompt, env: {}, createdAt: Date.now(), session: null },
	};
	const started = Date.now();
	await startRun(run, { warm: "off" });
	const waiter = wait(run);
	return { started, ended: () => waiter.done, runId, stop: async () => undefined };
}

const kinds = /** @type {const} */ ([
	["local", dispatch(undefined)],
	["container (start cache)", dispatch("box")],
	["container, cold (transport)", cold],
]);
/** @type {Record<string, number[]>} */
const times = Object.fromEntries(kinds.map(([name]) => [name, []]));
for (let round = 0; round <= RUNS; round++) {
	for (const [name, start] of kinds) {
		n += 1;
		const prompt = `BENCH-${n}`;
		const run = await start(prompt);
		const request = await model.waitForRequest((r) => r.prompt === prompt, prompt, 120_000);
		if (round > 0) times[name]?.push(request.at - run.started);
		await run.ended();
	}
}
console.log("dispatch -> first model request");
for (const [name] of kinds) console.log(`  ${name.padEnd(28)} ${spread(times[name] ?? [])}`);
const local = pct(times.local ?? [], 50);
for (const name of ["container (start cache)", "container, cold (transport)"])
	console.log(`  ${name}: adds ${(pct(times[name] ?? [], 50) - local).toFixed(0)} ms over local (medians)`);

/**
 * Memory in KiB: RSS (every resident page), PSS (shared pages split among their users: a local run
 * shares node's text with every other node process here, a container's node is the image's own file)
 * and USS (private pages only).
 * @param {number[]} pids
 */
function memory(pids) {
	const total = { rss: 0, pss: 0, uss: 0 };
	for (const pid of pids) {
		try {
			const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
			const field = (/** @type {string} */ name) =>
				Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0);
			total.rss += field("Rss");
			total.pss += field("Pss");
			total.uss += field("Private_Clean") + field("Private_Dirty");
		} catch {
			// Exited while we looked.
		}
	}
	const mib = (/** @type {number} */ kib) => `${(kib / 1024).toFixed(1)}`;
	return `RSS ${mib(total.rss)} / PSS ${mib(total.pss)} / USS ${mib(total.uss)} MiB`;
}

/** conmon of a podman container (on this side, one per container). @param {string} name */
function conmonPids(name) {
	return readdirSync("/proc")
		.filter((entry) => /^\d+$/.test(entry))
		.filter((entry) => {
			try {
				const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
				return argv[0]?.endsWith("conmon") && argv.includes(name);
			} catch {
				return false;
			}
		})
		.map(Number);
}

// Idle: each worker waits for a model response held back; measured after it settled.
const release = model.hold();
console.log("idle run (worker waiting on the model)");
for (const [name, start] of [kinds[0], kinds[1]]) {
	n += 1;
	const prompt = `IDLE-${n}`;
	const run = await start(prompt);
	await model.waitForRequest((r) => r.prompt === prompt, prompt, 120_000);
	await sleep(3000);
	const procs = runProcesses(run.runId).map((p) => p.pid);
	const names = procs.map((pid) => readFileSync(`/proc/${pid}/comm`, "utf8").trim()).join(", ");
	console.log(`  ${name.padEnd(28)} ${procs.length} processes (${names}): ${memory(procs)}`);
	if (name !== "local") console.log(`  ${"  + conmon".padEnd(28)} ${memory(conmonPids(`ab-${run.runId}`))}`);
	await run.stop();
}
release();
console.log(load());
await model.close();
rmSync(root, { recursive: true, force: true });
