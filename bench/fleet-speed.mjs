// The fleet's speed as a user feels it: N loopback hosts (Unix users behind their own sshd) x M rows each
// through one pool, every row running T turns with a tool call (bash) per turn and streamed text, and
// the same M rows on this machine for the ratio. Prints: the processes here and their summed PSS (1 s
// samples), a host's event -> the local store (the far runner's own `at` on each event -> the line
// showing in the local mirror's events.jsonl), a streamed part sent by the model -> the row's local
// status.json showing it, and -> its local words.jsonl (what the TUI and the page read for grown words; their
// own paint is not in these figures),
// the dispatch calls' total (one after another, as a script's `dispatch --on <pool>` would), and the
// load. Needs root and sshd.
// Run: node --experimental-strip-types bench/fleet-speed.mjs   (BENCH_HOSTS=2 BENCH_ROWS=5 BENCH_TURNS=4;
// BENCH_LOCAL=0 leaves the local rows out; BENCH_PROF=<dir> profiles the dispatching process;
// BENCH_HOSTS_NICE=19 runs the hosts' sshd and everything they start at that niceness, so this machine's side
// gets the cores first, as it would with the hosts on machines of their own)
import { execFileSync, spawn } from "node:child_process";
import { closeSync, fstatSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, watch } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { createBoardService } from "../src/board/engine/service.ts";
import { startFleet, stopFleet } from "../test-support/fleet-hosts.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir } from "../test-support/model-server.ts";
import { PI_CLI } from "../test-support/pi-harness.ts";
import { sshdMissing } from "../test-support/requires.ts";
import { machineTicks, processesWhere, sampleProcesses } from "./_fleet-measure.mjs";
import { load, pct, spread } from "./_stats.mjs";
import { LineSplitter } from "../runner/lines.mjs";
import { readWords } from "../runner/live-words.mjs";

const HOSTS = Array.from({ length: Number(process.env.BENCH_HOSTS ?? 2) }, (_, i) => `s${i}`);
const ROWS = Number(process.env.BENCH_ROWS ?? 5);
const TURNS = Number(process.env.BENCH_TURNS ?? 4);
const LOCAL = process.env.BENCH_LOCAL !== "0";
const CHUNK_MS = 200;
const PHASE_TIMEOUT_MS = 20 * 60_000;
const MARKS = Array.from({ length: TURNS + 1 }, (_, i) => `PART-${i}`);

const missing = sshdMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	process.exit(0);
}
console.log(`start: ${load()}; ${HOSTS.length} hosts x ${ROWS} rows, ${TURNS} turns with a tool call each`);

const root = mkdtempSync(join(tmpdir(), "pab-bench-speed-"));
const storeDir = join(root, "store");
// A turn: a few streamed words, then a bash call that changes the workspace (so a snapshot has work).
const steps = [
	...MARKS.slice(0, TURNS).map((mark, i) => ({
		text: `${mark} working on step ${i} now.`,
		toolCall: { name: "bash", args: { command: `echo ${i} >> speed.txt` } },
	})),
	{ text: `${MARKS[TURNS]} all done.` },
];
const model = await startModelServer({
	chunkDelayMs: CHUNK_MS,
	script: { rules: [{ match: "SPEED", steps }], fallback: [{ text: "ok" }] },
});
const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
const agentDir = writeAgentDir(model, join(root, "agent"));
const boardEnv = {
	...process.env,
	PI_CODING_AGENT_DIR: agentDir,
	PI_OFFLINE: "1",
	PI_SKIP_VERSION_CHECK: "1",
	PI_TELEMETRY: "0",
};
const total = HOSTS.length * ROWS;
const board = createBoardService({
	storeDir,
	piCommand: [process.execPath, PI_CLI],
	maxConcurrent: total,
	env: boardEnv,
});
/** @type {import("../test-support/fleet-hosts.ts").FleetHost[]} */
let fleet = [];
/** @typedef {import("../src/board/engine/types.ts").BoardRow} BoardRow */

/** Every process here the rows cost: runners, workers, links, ssh (not the dispatcher). */
const here = () =>
	processesWhere(
		(p) =>
			(p.cmd.includes(storeDir) || fleet.some((f) => p.cmd.includes(f.host.configFile))) &&
			!p.cmd.includes("_fleet-dispatch.mjs"),
	);

/** Every process of the hosts' users: their pi workers, far runners, host-agents and git. */
const onHosts = () => processesWhere(() => true, new Set(fleet.map((f) => f.host.user.uid)));

/**
 * BENCH_HOSTS_NICE: every host's sshd (whose sessions inherit it) and its user's processes at that niceness.
 * @param {string} nice
 */
function niceHosts(nice) {
	const pids = [
		...fleet.map((f) => readFileSync(join(f.host.root, "sshd.pid"), "utf8").trim()),
		...onHosts().map((p) => String(p.pid)),
	];
	execFileSync("renice", ["-n", nice, "-p", ...pids], { stdio: "ignore" });
	console.log(`the hosts' sshd and ${pids.length - fleet.length} processes of their users at nice ${nice}`);
	// With autogroups every session (each ssh session, setsid) shares the cores as a group, whatever its nice.
	if (readFileSync("/proc/sys/kernel/sched_autogroup_enabled", "utf8").trim() === "1")
		console.log(
			"  (kernel.sched_autogroup_enabled=1: each ssh session still gets a group's share; set it to 0 for nice to hold)",
		);
}

/**
 * Watches each row's local run dir from its dispatch on: when each event's line shows in events.jsonl (by
 * seq, reading only what was appended), and when each mark shows in status.json and in words.jsonl.
 * Rows join as their dispatch returns (`add`), so a row that starts while later rows are still being
 * dispatched is timed from its start, not from the last dispatch's end.
 */
function watchRows() {
	/** @type {Map<string, { row: BoardRow, offset: number, text: StringDecoder, lines: LineSplitter, arrived: Map<number, { at: number, seen: number }>, marks: Map<string, number>, wordMarks: Map<string, number> }>} */
	const seen = new Map();
	/** @type {import("node:fs").FSWatcher[]} */
	const watchers = [];
	/** @type {Set<BoardRow>} */
	const unwatched = new Set();
	/** @param {BoardRow} row */
	const look = (row) => {
		const state = seen.get(row.id);
		if (!state || !row.runDir) return;
		const now = Date.now();
		try {
			const fd = openSync(join(row.runDir, "events.jsonl"), "r");
			try {
				const size = fstatSync(fd).size;
				if (size > state.offset) {
					const bytes = Buffer.alloc(size - state.offset);
					const got = readSync(fd, bytes, 0, bytes.length, state.offset);
					state.offset += got;
					for (const line of state.lines.push(state.text.write(bytes.subarray(0, got)))) {
						const event = JSON.parse(line);
						if (typeof event.seq === "number" && typeof event.at === "number" && !state.arrived.has(event.seq))
							state.arrived.set(event.seq, { at: event.at, seen: now });
					}
				}
			} finally {
				closeSync(fd);
			}
		} catch {
			// Not there yet.
		}
		try {
			const status = JSON.parse(readFileSync(join(row.runDir, "status.json"), "utf8"));
			const text = `${status.live?.text ?? ""} ${status.latestAssistant ?? ""}`;
			for (const mark of MARKS) if (!state.marks.has(mark) && text.includes(mark)) state.marks.set(mark, now);
		} catch {
			// Mid-write or not there yet.
		}
		// The streamed words' own path: what the board reads for a row whose words grew (runner/live-words.mjs).
		const words = readWords(row.runDir)?.text ?? "";
		for (const mark of MARKS) if (!state.wordMarks.has(mark) && words.includes(mark)) state.wordMarks.set(mark, now);
	};
	const attach = () => {
		for (const row of unwatched) {
			try {
				watchers.push(watch(row.runDir ?? "", () => look(row)));
				unwatched.delete(row);
				look(row);
			} catch {
				// The run dir is not there yet.
			}
		}
	};
	const timer = setInterval(() => {
		attach();
		for (const state of seen.values()) look(state.row);
	}, 250);
	return {
		seen,
		/** @param {BoardRow} row */
		add(row) {
			seen.set(row.id, {
				row,
				offset: 0,
				text: new StringDecoder("utf8"),
				lines: new LineSplitter(),
				arrived: new Map(),
				marks: new Map(),
				wordMarks: new Map(),
			});
			unwatched.add(row);
			attach();
		},
		stop() {
			clearInterval(timer);
			for (const w of watchers) w.close();
		},
	};
}

/** The board's tick while a phase runs (pumps queues, places pool runs). */
function tick() {
	let running = true;
	const loop = (async () => {
		while (running) {
			await board.supervise().catch(() => undefined);
			await new Promise((resolve) => setTimeout(resolve, 500));
		}
	})();
	return async () => {
		running = false;
		await loop;
	};
}

/**
 * `n` dispatches one after another from a process of their own; each row is handed to `onRow` as its
 * dispatch returns.
 * @param {"remote" | "local"} where @param {number} n @param {string} prompt @param {(row: BoardRow) => void} onRow
 */
async function dispatch(where, n, prompt, onRow) {
	const calls = Array.from({ length: n }, () => ({
		prompt,
		cwd: repo,
		...(where === "remote" ? { target: "fleet" } : { worktreeMode: "worktree" }),
	}));
	const child = spawn(
		process.execPath,
		[
			"--experimental-strip-types",
			// BENCH_PROF=<dir>: a CPU profile of the dispatching process, to read where a dispatch goes.
			...(process.env.BENCH_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROF}`] : []),
			join(import.meta.dirname, "_fleet-dispatch.mjs"),
			JSON.stringify({ storeDir, maxConcurrent: total, calls, sequential: true }),
		],
		{ env: boardEnv, stdio: ["ignore", "pipe", "inherit"] },
	);
	const lines = new LineSplitter();
	let summary = "";
	/** @type {Promise<void>[]} */
	const added = [];
	child.stdout.setEncoding("utf8");
	child.stdout.on("data", (/** @type {string} */ chunk) => {
		for (const line of lines.push(chunk)) {
			/** @type {{ dispatched?: string[] }} */
			const progress = JSON.parse(line);
			if (!progress.dispatched) summary = line;
			for (const id of progress.dispatched ?? [])
				added.push(board.get(id).then((row) => row && onRow(/** @type {BoardRow} */ (row))));
		}
	});
	const code = await new Promise((resolve) => child.on("close", resolve));
	if (code !== 0) throw new Error(`dispatch of ${n} ${where} rows exited ${code}`);
	await Promise.all(added);
	/** @type {{ t0: number, t1: number, ids: string[], each: number[], cpuMs: number }} */
	const result = JSON.parse(summary);
	const rows = /** @type {BoardRow[]} */ (await Promise.all(result.ids.map((id) => board.get(id))));
	return { ...result, rows };
}

/** @param {string[]} ids */
async function waitEnded(ids) {
	const deadline = Date.now() + PHASE_TIMEOUT_MS;
	for (;;) {
		const rows = await Promise.all(ids.map((id) => board.get(id)));
		if (rows.every((row) => row && !row.alive && row.state !== "queued" && row.state !== "working"))
			return /** @type {BoardRow[]} */ (rows);
		if (Date.now() > deadline) throw new Error(`rows not ended after ${PHASE_TIMEOUT_MS / 60_000} min`);
		await new Promise((resolve) => setTimeout(resolve, 1000));
	}
}

/** @param {"remote" | "local"} where @param {number} n */
async function phase(where, n) {
	const prompt = `SPEED ${where} ${n} ${Date.now()}`;
	const stopTick = tick();
	const procs = sampleProcesses(here, 1000);
	const hostProcs = sampleProcesses(onHosts, 1000);
	const ticksBefore = machineTicks();
	const watched = watchRows();
	const { t0, t1, rows, each, cpuMs } = await dispatch(where, n, prompt, (row) => watched.add(row));
	const ended = await waitEnded(rows.map((row) => row.id));
	// The last lines: a watch can coalesce; one more look at everything.
	await new Promise((resolve) => setTimeout(resolve, 300));
	const cost = procs.stop();
	const hostCost = hostProcs.stop();
	const ticksAfter = machineTicks();
	await stopTick();
	watched.stop();
	const eventToStore = [];
	for (const state of watched.seen.values())
		for (const { at, seen } of state.arrived.values()) eventToStore.push(Math.max(0, seen - at));
	const partToStatus = [];
	const partToWords = [];
	for (const request of model.requests().filter((r) => r.prompt === prompt)) {
		const system = JSON.stringify(request.messages.filter((m) => m.role === "system"));
		const row = rows.find((r) => system.includes(r.id));
		const seen = row ? watched.seen.get(row.id) : undefined;
		for (const sent of request.sent) {
			const mark = MARKS.find((m) => sent.text.includes(m));
			const shown = mark ? seen?.marks.get(mark) : undefined;
			if (shown !== undefined) partToStatus.push(shown - sent.at);
			const worded = mark ? seen?.wordMarks.get(mark) : undefined;
			if (worded !== undefined) partToWords.push(worded - sent.at);
		}
	}
	const busy = cost.samples.filter((s) => s.count > 0);
	return {
		where,
		n,
		dispatchMs: t1 - t0,
		each,
		dispatchCpuMs: cpuMs,
		eventToStore,
		partToStatus,
		partToWords,
		completed: ended.filter((row) => row.state === "completed").length,
		notCompleted: ended
			.filter((row) => row.state !== "completed")
			.map((row) => `${row.id} ${row.state}: ${row.error ?? row.summary ?? ""}`),
		pssMb: busy.map((s) => s.pssKb / 1024),
		counts: busy.map((s) => s.count),
		mostComms: busy.reduce((most, s) => (s.count > most.count ? s : most), { count: 0, comms: "" }).comms,
		cpuShare: (cost.cpuSeconds * 100) / cost.seconds,
		hostPssMb: hostCost.samples.filter((s) => s.count > 0).map((s) => s.pssKb / 1024),
		machineBusy: (100 * (ticksAfter.busy - ticksBefore.busy)) / Math.max(1, ticksAfter.all - ticksBefore.all),
		seconds: cost.seconds,
		load: load(),
	};
}

/** @param {Awaited<ReturnType<typeof phase>>} r */
function report(r) {
	const pad = r.where.padEnd(6);
	console.log(
		[
			`  ${pad} ${r.completed}/${r.n} completed${r.notCompleted.length ? ` (NOT: ${r.notCompleted.slice(0, 3).join("; ")})` : ""}; phase ${r.seconds.toFixed(0)} s; ${r.load}`,
			`  ${pad} ${r.n} dispatch calls one after another: ${r.dispatchMs} ms in all (each ${spread(r.each)}); the dispatcher's CPU ${r.dispatchCpuMs.toFixed(0)} ms in all, ${(r.dispatchCpuMs / r.n).toFixed(1)} ms a call`,
			`  ${pad} processes here: median ${pct(r.counts, 50)}, most ${Math.max(0, ...r.counts)}; summed PSS ${spread(r.pssMb, "MB")}, peak ${Math.max(0, ...r.pssMb).toFixed(1)} MB; CPU ${r.cpuShare.toFixed(1)} % of a core; at the most: ${r.mostComms}`,
			// The hosts' own CPU is the machine's less what is here: summed per process it counts a far runner's
			// pi twice (its own time and, once both have exited, the runner's reaped time).
			`  ${pad} the machine ${r.machineBusy.toFixed(0)} % busy (${cpus().length} cores): ${(r.machineBusy * cpus().length - r.cpuShare).toFixed(0)} % of a core not the rows' processes here (the hosts', the bench's model and dispatcher); the hosts' users' processes summed PSS ${spread(r.hostPssMb, "MB")}`,
			`  ${pad} event written -> local store: p50 ${pct(r.eventToStore, 50)} ms, p95 ${pct(r.eventToStore, 95)} ms (${spread(r.eventToStore)}, ${r.eventToStore.length} events)`,
			`  ${pad} streamed part sent -> local status.json: p50 ${pct(r.partToStatus, 50)} ms, p95 ${pct(r.partToStatus, 95)} ms (${spread(r.partToStatus)}, ${r.partToStatus.length} parts)`,
			`  ${pad} streamed part sent -> local words.jsonl (the words' own path): p50 ${pct(r.partToWords, 50)} ms, p95 ${pct(r.partToWords, 95)} ms (${spread(r.partToWords)}, ${r.partToWords.length} parts)`,
		].join("\n"),
	);
}

try {
	const setupStart = Date.now();
	fleet = await startFleet(board, model, HOSTS, ROWS);
	await board.targets.add("fleet", { kind: "pool", members: HOSTS.join(",") });
	if (process.env.BENCH_HOSTS_NICE) niceHosts(process.env.BENCH_HOSTS_NICE);
	// Warm: a link per host and pi's first start on each side (not counted).
	await phase("remote", HOSTS.length);
	console.log(`set-up and warm-up ${((Date.now() - setupStart) / 1000).toFixed(0)} s; ${load()}`);
	report(await phase("remote", total));
	if (LOCAL) report(await phase("local", ROWS));
	console.log(`end: ${load()}`);
} finally {
	await stopFleet(fleet);
	await model.close();
	rmSync(root, { recursive: true, force: true });
}
