// The soak (#38): N runs over D minutes on this machine and on an ssh target (sshd on 127.0.0.1, a
// second Unix user), dispatched from a script at random times, with faults at random times: a runner,
// a link, a worker and a host-agent SIGKILLed (only a pid whose recorded start time still matches),
// sshd stopped for 30 s, the store's disk filled for 10 s (the store is on a tmpfs of its own), and a
// board opened for 20 s and closed again. No board is open the rest of the time: the store's keeper
// moves the queue. Each run is the loopback model asking for two short `sleep` tools and an answer.
// It prints runs lost, events lost or doubled, runs not recorded ended 60 s after their processes
// were gone, and the longest time a startable run waited (sampled every 2 s), with the load at start
// and end. Not a CI test (an hour by default; bench/run-all.mjs skips it). Needs root, sshd and tmpfs.
// Run: node --experimental-strip-types bench/soak.mjs [--runs 100] [--minutes 60]
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
	closeSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readdirSync,
	readFileSync,
	rmSync,
	statfsSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive, processStartTime, signalVerified } from "../runner/store/proc.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir } from "../test-support/model-server.ts";
import { PI_CLI } from "../test-support/pi-harness.ts";
import { sshdMissing } from "../test-support/requires.ts";
import { startSshHost } from "../test-support/sshd.ts";
import { pct } from "./_stats.mjs";

/** @param {string} name @param {number} fallback */
function flag(name, fallback) {
	const at = process.argv.indexOf(`--${name}`);
	const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
	if (!(value > 0)) throw new Error(`--${name} wants a positive number`);
	return value;
}
const RUNS = flag("runs", 100);
const MINUTES = flag("minutes", 60);
const DURATION_MS = MINUTES * 60_000;
const SAMPLE_MS = 2000;
const GONE_LIMIT_MS = 60_000;
/** After D: no more faults, every run gets this long to end (board closed). */
const DRAIN_MS = 10 * 60_000;
const SLOTS = 2;
const STORE_MB = 256;
const TERMINAL = new Set(["completed", "idle", "failed", "stopped", "error"]);
const FAULTS = ["runner", "link", "worker", "host-agent", "sshd", "disk", "board"];
const SOAK_TAG = "PAB_SOAK";
const soakId = randomBytes(6).toString("hex");

const missing = sshdMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	process.exit(0);
}
if (process.getuid?.() !== 0) {
	console.log("skipped: the soak mounts a tmpfs for the store (needs root)");
	process.exit(0);
}

const uptime = () => execFileSync("uptime", { encoding: "utf8" }).trim();
const t0 = Date.now();
const clock = () => `${((Date.now() - t0) / 1000).toFixed(0).padStart(5)} s`;
/** @param {string} line */
const log = (line) => console.log(`${clock()}  ${line}`);
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));
const random = (/** @type {number} */ from, /** @type {number} */ to) => from + Math.random() * (to - from);

const startLoad = uptime();
console.log(`soak: ${RUNS} runs over ${MINUTES} min, local and ssh (${SLOTS} slots each); start: ${startLoad}`);

// Everything made is recorded here as it is made, so cleanup (normal end, error or signal) undoes it.
const root = mkdtempSync(join(tmpdir(), "pab-bench-soak-"));
const storeMount = join(root, "store-fs");
const storeDir = join(storeMount, "store");
/** @type {Awaited<ReturnType<typeof startModelServer>> | undefined} */
let model;
/** @type {Awaited<ReturnType<typeof startSshHost>> | undefined} */
let host;
let mounted = false;
/** @type {(() => void) | undefined} */
let closeBoard;
/** @type {NodeJS.Timeout[]} */
const timers = [];
let cleaning = false;
let fillFile = "";

/** Every process started for this soak carries PAB_SOAK=<id> (the board's env): ended with a start-time check. */
function soakProcesses() {
	const needle = Buffer.from(`${SOAK_TAG}=${soakId}\0`);
	const found = [];
	for (const name of readdirSync("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
		try {
			if (readFileSync(`/proc/${pid}/environ`).indexOf(needle) < 0) continue;
		} catch {
			continue;
		}
		const start = processStartTime(pid);
		if (start) found.push({ pid, start });
	}
	return found;
}

async function cleanup() {
	if (cleaning) return;
	cleaning = true;
	for (const timer of timers) clearTimeout(timer);
	closeBoard?.();
	for (let round = 0; round < 20; round++) {
		const left = soakProcesses();
		if (left.length === 0) break;
		for (const p of left) signalVerified(p.pid, p.start, "SIGKILL");
		await sleep(100);
	}
	try {
		await host?.cleanup();
	} catch (error) {
		console.error(`cleanup: ssh host: ${error instanceof Error ? error.message : error}`);
	}
	await model?.close().catch(() => undefined);
	if (fillFile) rmSync(fillFile, { force: true });
	if (mounted) {
		try {
			execFileSync("umount", [storeMount], { stdio: "ignore" });
		} catch {
			// Something still holds it: detach it now, it goes when released.
			execFileSync("umount", ["-l", storeMount], { stdio: "ignore" });
		}
		mounted = false;
	}
	rmSync(root, { recursive: true, force: true });
}
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM", "SIGHUP"])) {
	process.once(signal, () => {
		console.log(`\n${signal}: cleaning up`);
		void cleanup().finally(() => process.exit(130));
	});
}

/** @typedef {{ n: number, id: string, runId: string, runDir: string, target: "local" | "h", at: number, seen: boolean, goneSince?: number, startableSince?: number, waited?: number, endedAt?: number, goneToEnd?: number, late?: boolean, state?: string }} Run */
/** @type {Run[]} */
const runs = [];
let refused = 0;
/** @type {string[]} */
const refusals = [];
/** @type {Record<string, number>} */
const injected = {};
/** @type {Record<string, number>} */
const skipped = {};
/** Until when a target's queue cannot move for a reason the soak made (disk full, sshd down), plus 5 s. */
const blockedUntil = { local: 0, h: 0 };
let sshdDown = false;
/**
 * The soak's own outages, for the recording bound: a run's end cannot be recorded here while the store's
 * disk is full, nor an ssh run's learnt while its host's sshd is stopped. `h`: the ssh target's only.
 * @type {{ from: number, to: number, on: "all" | "h" }[]}
 */
const outages = [];
let diskFull = false;
let boardOpen = false;

try {
	mkdirSync(storeMount, { mode: 0o700 });
	execFileSync("mount", ["-t", "tmpfs", "-o", `size=${STORE_MB}m,mode=0700`, "tmpfs", storeMount]);
	mounted = true;
	model = await startModelServer({ script: { rules: [], fallback: [{ text: "ok" }] } });
	/** @type {import("../test-support/faux-script.ts").FauxRule[]} */
	const rules = [];
	const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
	const agentDir = writeAgentDir(model, join(root, "agent"));
	// useradd takes /etc/passwd's lock, which the suite's own host users contend for: a refusal is tried again.
	for (let attempt = 1; !host; attempt++) {
		try {
			host = await startSshHost();
		} catch (error) {
			if (attempt >= 10 || !String(error instanceof Error ? error.message : error).includes("cannot lock"))
				throw error;
			log(`ssh host: /etc/passwd busy, trying again (${attempt})`);
			await sleep(3000);
		}
	}
	host.user.writePiConfig({ models: model.modelsJson(), auth: model.authJson(), settings: model.settingsJson() });
	/** @type {NodeJS.ProcessEnv} */
	const env = {
		...process.env,
		PI_CODING_AGENT_DIR: agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		[SOAK_TAG]: soakId,
	};
	delete env.AGENT_BOARD_KEEPER;
	const board = createBoardService({ storeDir, piCommand: [process.execPath, PI_CLI], maxConcurrent: SLOTS, env });
	await board.targets.add("h", { kind: "ssh", host: host.alias, sshConfig: host.configFile, max: SLOTS });
	const check = await board.targets.check("h", { install: true });
	if (!check.ok) throw new Error(`targets check h: ${JSON.stringify(check.items.filter((item) => !item.ok))}`);
	const hostUid = host.user.uid;
	const farRoot = join(host.user.home, ".agent-board");

	/** The far run directory of a run (the target's store, in the host user's home). @type {Map<string, string>} */
	const farDirs = new Map();
	/** @param {string} runId */
	function farRunDir(runId) {
		const known = farDirs.get(runId);
		if (known) return known;
		/** @param {string} dir @param {number} depth @returns {string | undefined} */
		const walk = (dir, depth) => {
			let entries;
			try {
				entries = readdirSync(dir, { withFileTypes: true });
			} catch {
				return undefined;
			}
			for (const entry of entries) {
				if (!entry.isDirectory() || entry.isSymbolicLink()) continue;
				if (entry.name === runId && dir.endsWith("/runs")) return join(dir, entry.name);
				if (depth > 0 && entry.name !== "pkg" && entry.name !== "sessions") {
					const found = walk(join(dir, entry.name), depth - 1);
					if (found) return found;
				}
			}
			return undefined;
		};
		const found = walk(farRoot, 6);
		if (found) farDirs.set(runId, found);
		return found;
	}

	/** @param {string} path @returns {any} */
	const readJson = (path) => {
		try {
			return JSON.parse(readFileSync(path, "utf8"));
		} catch {
			return undefined;
		}
	};

	/**
	 * One /proc pass: each run tag's processes (a run's here carry its id, its far side `<id>@far`), and the
	 * host user's host-agents. @returns {{ tags: Map<string, number>, agents: { pid: number, start: string }[] }}
	 */
	function scan() {
		const tags = new Map();
		const agents = [];
		const needle = Buffer.from("AGENT_BOARD_RUN_ID=");
		for (const name of readdirSync("/proc")) {
			const pid = Number(name);
			if (!Number.isInteger(pid) || pid <= 1) continue;
			try {
				const environ = readFileSync(`/proc/${pid}/environ`);
				const at = environ.indexOf(needle);
				if (at >= 0) {
					const end = environ.indexOf(0, at);
					const tag = environ.subarray(at + needle.length, end < 0 ? undefined : end).toString();
					tags.set(tag, (tags.get(tag) ?? 0) + 1);
				}
				const status = readFileSync(`/proc/${pid}/status`, "utf8");
				if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== hostUid) continue;
				if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("host-agent.mjs")) continue;
				const start = processStartTime(pid);
				if (start) agents.push({ pid, start });
			} catch {
				// Gone meanwhile.
			}
		}
		return { tags, agents };
	}

	/**
	 * Tracks every run: its recorded end after its processes went, and how long a startable run waited. A slot
	 * counts as free once no process of the run holding it is left (its end not recorded yet): a queued run
	 * behind a dead run waits for that recovery too, as its user would see it.
	 */
	function sample() {
		const now = Date.now();
		const { tags } = scan();
		/** @type {Record<string, Run[]>} */
		const waiting = { local: [], h: [] };
		/** @type {Record<string, number>} */
		const busy = { local: 0, h: 0 };
		for (const run of runs) {
			if (run.endedAt) continue;
			const state = readJson(join(run.runDir, "status.json"))?.state;
			run.state = state;
			const procs = (tags.get(run.runId) ?? 0) + (tags.get(`${run.runId}@far`) ?? 0);
			if (procs > 0) run.seen = true;
			if (TERMINAL.has(state)) {
				run.endedAt = now;
				if (run.goneSince !== undefined) {
					run.goneToEnd = now - run.goneSince;
					// Over the keeper's 10 s bound: named, with what was going on (sshd down, a disk full).
					if (run.goneToEnd > 10_000)
						log(
							`slow end: ${run.id} (${run.target}) ${state} ${(run.goneToEnd / 1000).toFixed(0)} s after its processes were gone`,
						);
				}
				if (run.startableSince !== undefined && run.waited === undefined) run.waited = now - run.startableSince;
				continue;
			}
			if (state === "queued" && procs === 0) {
				waiting[run.target]?.push(run);
				continue;
			}
			// Started (or starting): a wait that was counted ends here.
			if (run.startableSince !== undefined && run.waited === undefined) run.waited = now - run.startableSince;
			if (procs > 0) {
				busy[run.target] = (busy[run.target] ?? 0) + 1;
				run.goneSince = undefined;
			} else if (state === "working" || state === "needs_input") {
				run.goneSince ??= now;
				if (now - run.goneSince > GONE_LIMIT_MS && !run.late) {
					run.late = true;
					log(
						`LATE: ${run.id} (${run.target}) still ${state} ${((now - run.goneSince) / 1000).toFixed(0)} s after its processes were gone`,
					);
				}
			}
		}
		for (const target of /** @type {const} */ (["local", "h"])) {
			const free = SLOTS - (busy[target] ?? 0);
			const queue = (waiting[target] ?? []).sort((a, b) => a.at - b.at);
			queue.forEach((run, index) => {
				const startable = index < free && now > blockedUntil[target];
				if (startable) run.startableSince ??= now;
				else run.startableSince = undefined;
			});
		}
	}

	/** @param {"local" | "h"} target */
	async function dispatch(target) {
		const n = runs.length + refused + 1;
		const [a, b] = [Math.round(random(8, 25)), Math.round(random(8, 25))];
		const bash = (/** @type {string} */ command) => ({ toolCall: { name: "bash", args: { command } } });
		rules.push({
			match: `SOAK-${n}.`,
			steps: [
				bash(`sleep ${a}; printf 'R%s\\n' '-${n}-1'`),
				bash(`sleep ${b}; printf 'R%s\\n' '-${n}-2'`),
				{ text: `done ${n}` },
			],
		});
		model?.setScript({ rules, fallback: [{ text: "ok" }] });
		try {
			const row = await board.dispatch({
				prompt: `SOAK-${n}. Run the steps.`,
				cwd: repo,
				worktreeMode: target === "h" ? "worktree" : "none",
				...(target === "h" ? { target } : {}),
			});
			const runId = row.currentRunId ?? "";
			runs.push({
				n,
				id: row.id,
				runId,
				runDir: join(storeDir, "rows", row.id, "runs", runId),
				target,
				at: Date.now(),
				seen: false,
			});
			log(`dispatched #${n} ${row.id} on ${target}`);
		} catch (error) {
			// A dispatch refused with its reason (a full disk) loses nothing: the caller was told.
			refused += 1;
			refusals.push(`#${n} ${target}: ${error instanceof Error ? error.message : error}`);
			log(`dispatch #${n} on ${target} refused: ${error instanceof Error ? error.message : error}`);
		}
	}

	/** A live run of this kind, its recorded owner file. @param {(run: Run) => boolean} which @param {(run: Run) => string | undefined} file */
	function recorded(which, file) {
		const live = runs.filter((run) => !run.endedAt && which(run));
		for (const run of live.sort(() => Math.random() - 0.5)) {
			const path = file(run);
			const record = path ? readJson(path) : undefined;
			if (record && isAlive(record.pid, String(record.start)))
				return { run, pid: record.pid, start: String(record.start) };
		}
		return undefined;
	}

	/** A fault of a kind still under way (sshd down, disk full, board open) is not stacked. @param {string} kind */
	function skip(kind) {
		skipped[kind] = (skipped[kind] ?? 0) + 1;
	}

	/** @param {string} kind */
	async function fault(kind) {
		/** @param {string} what @param {{ pid: number, start: string } | undefined} victim */
		const kill = (what, victim) => {
			if (victim && signalVerified(victim.pid, victim.start, "SIGKILL")) {
				injected[kind] = (injected[kind] ?? 0) + 1;
				log(`fault: SIGKILL ${what} (pid ${victim.pid})`);
			} else {
				skipped[kind] = (skipped[kind] ?? 0) + 1;
				log(`fault: no ${kind} to kill now`);
			}
		};
		const far = (/** @type {Run} */ run, /** @type {string} */ name) => {
			const dir = farRunDir(run.runId);
			return dir ? join(dir, name) : undefined;
		};
		/** A local run's or an ssh run's far side's, whichever side has one (a side picked at random first). @param {string} file */
		const eitherSide = (file) => {
			const sides = [
				() =>
					recorded(
						(run) => run.target === "local",
						(run) => join(run.runDir, file),
					),
				() =>
					recorded(
						(run) => run.target === "h",
						(run) => far(run, file),
					),
			];
			if (Math.random() < 0.5) sides.reverse();
			return sides[0]?.() ?? sides[1]?.();
		};
		if (kind === "runner") {
			// This machine's runner, or the far runner of an ssh run (each recorded in its run's runner.json).
			const victim = eitherSide("runner.json");
			kill(`runner of ${victim?.run.id ?? "-"}`, victim);
		} else if (kind === "worker") {
			const victim = eitherSide("worker.json");
			kill(`worker of ${victim?.run.id ?? "-"}`, victim);
		} else if (kind === "link") {
			const record = readJson(join(storeDir, "targets", "h", "link", "link.json"));
			kill(
				"the target's link",
				record && isAlive(record.pid, String(record.start))
					? { pid: record.pid, start: String(record.start) }
					: undefined,
			);
		} else if (kind === "host-agent") {
			// Not recorded in a file: its start time is read when it is picked and checked again at the kill.
			const agents = scan().agents;
			kill("host-agent", agents[Math.floor(Math.random() * agents.length)]);
		} else if (kind === "sshd") {
			if (sshdDown || !host) return skip(kind);
			sshdDown = true;
			blockedUntil.h = Number.POSITIVE_INFINITY;
			injected[kind] = (injected[kind] ?? 0) + 1;
			log("fault: sshd stopped for 30 s");
			const from = Date.now();
			await host.stop();
			await sleep(30_000);
			await host.start();
			outages.push({ from, to: Date.now(), on: "h" });
			blockedUntil.h = Date.now() + 5000;
			sshdDown = false;
			log("sshd back");
		} else if (kind === "disk") {
			if (diskFull) return skip(kind);
			diskFull = true;
			blockedUntil.local = blockedUntil.h = Number.POSITIVE_INFINITY;
			injected[kind] = (injected[kind] ?? 0) + 1;
			fillFile = join(storeMount, `fill-${soakId}`);
			const fd = openSync(fillFile, "w", 0o600);
			const chunk = Buffer.alloc(1 << 20);
			try {
				for (;;) writeSync(fd, chunk);
			} catch {
				// ENOSPC: full. The last partial megabyte is filled too.
				try {
					for (;;) writeSync(fd, chunk, 0, 4096);
				} catch {
					// Full to the last page.
				}
			}
			closeSync(fd);
			const filledAt = Date.now();
			const fs = statfsSync(storeMount);
			log(`fault: store's disk full for 10 s (${fs.bavail * fs.bsize} bytes free)`);
			await sleep(10_000);
			unlinkSync(fillFile);
			outages.push({ from: filledAt, to: Date.now(), on: "all" });
			fillFile = "";
			diskFull = false;
			blockedUntil.local = Date.now() + 5000;
			if (!sshdDown) blockedUntil.h = Date.now() + 5000;
			log("space back");
		} else if (kind === "board") {
			if (boardOpen) return skip(kind);
			boardOpen = true;
			injected[kind] = (injected[kind] ?? 0) + 1;
			log("fault: a board open for 20 s");
			closeBoard = board.watch(() => undefined);
			await sleep(20_000);
			closeBoard();
			closeBoard = undefined;
			boardOpen = false;
			log("board closed");
		}
	}

	// The timeline: dispatches at random times in the first 85 % of D, in small bursts (queues form);
	// faults at random times, each kind in turn in a shuffled order so every kind comes.
	const dispatchAt = Array.from({ length: RUNS }, () => random(0, 0.85 * DURATION_MS)).sort((x, y) => x - y);
	for (let i = 0; i < dispatchAt.length; i++) if (i % 3 > 0) dispatchAt[i] = dispatchAt[i - 1] ?? 0;
	const faultCount = Math.max(FAULTS.length, Math.round(MINUTES / 1.5));
	/** @type {string[]} */
	const order = [];
	while (order.length < faultCount) order.push(...[...FAULTS].sort(() => Math.random() - 0.5));
	const faultAt = order.slice(0, faultCount).map((kind) => ({ kind, at: random(0.05, 0.95) * DURATION_MS }));

	let pending = Promise.resolve();
	for (const at of dispatchAt) {
		const target = Math.random() < 0.5 ? "local" : "h";
		// One dispatch at a time, as a script would (each waits for the one before).
		timers.push(
			setTimeout(() => {
				pending = pending.then(() => dispatch(target));
			}, at),
		);
	}
	/** @type {Promise<void>[]} */
	const faultsRunning = [];
	for (const { kind, at } of faultAt)
		timers.push(
			setTimeout(() => {
				faultsRunning.push(
					fault(kind).catch((error) =>
						log(`fault ${kind} failed: ${error instanceof Error ? error.message : error}`),
					),
				);
			}, at),
		);
	const sampler = setInterval(sample, SAMPLE_MS);
	timers.push(sampler);

	await sleep(DURATION_MS);
	await pending;
	await Promise.all(faultsRunning);
	log(
		`D is over: ${runs.length} dispatched, ${refused} refused; waiting up to ${DRAIN_MS / 60_000} min for every run to end`,
	);
	const drainEnd = Date.now() + DRAIN_MS;
	while (Date.now() < drainEnd && runs.some((run) => !run.endedAt)) await sleep(SAMPLE_MS);
	clearInterval(sampler);
	sample();

	// What each run left: its recorded end, events numbered 1..n once each (an ssh run's also all that the
	// target's copy holds), and a completed run's two tool outputs.
	let lost = 0;
	let eventsLost = 0;
	let eventsDoubled = 0;
	let outputsLost = 0;
	/** @type {Record<string, number>} */
	const ends = {};
	for (const run of runs) {
		const status = readJson(join(run.runDir, "status.json"));
		const state = status?.state ?? "missing";
		ends[`${run.target} ${state}`] = (ends[`${run.target} ${state}`] ?? 0) + 1;
		if (!TERMINAL.has(state)) {
			lost += 1;
			log(`LOST: ${run.id} (${run.target}) ${state}`);
			continue;
		}
		const seqsOf = (/** @type {string | undefined} */ path) => {
			if (!path || !existsSync(path)) return [];
			return readFileSync(path, "utf8")
				.split("\n")
				.filter(Boolean)
				.map((line) => {
					try {
						return Number(JSON.parse(line).seq);
					} catch {
						return Number.NaN;
					}
				});
		};
		const local = seqsOf(join(run.runDir, "events.jsonl"));
		const seen = new Set();
		let doubled = 0;
		for (const seq of local) {
			if (seen.has(seq)) doubled += 1;
			seen.add(seq);
		}
		const max = Math.max(0, ...local.filter(Number.isFinite));
		let missingHere = 0;
		for (let seq = 1; seq <= max; seq++) if (!seen.has(seq)) missingHere += 1;
		if (run.target === "h") {
			const farDir = farRunDir(run.runId);
			for (const seq of seqsOf(farDir ? join(farDir, "events.jsonl") : undefined))
				if (seq > max && !seen.has(seq)) missingHere += 1;
		}
		if (doubled || missingHere) log(`EVENTS: ${run.id} (${run.target}) ${missingHere} lost, ${doubled} doubled`);
		eventsLost += missingHere;
		eventsDoubled += doubled;
		if (state === "completed") {
			const text = readFileSync(join(run.runDir, "events.jsonl"), "utf8");
			for (const mark of [`R-${run.n}-1`, `R-${run.n}-2`])
				if (!text.includes(mark)) {
					outputsLost += 1;
					log(`OUTPUT: ${run.id} (${run.target}) completed without ${mark}`);
				}
		}
	}
	const late = runs.filter((run) => run.late).length;
	const goneToEnd = runs.flatMap((run) => (run.goneToEnd !== undefined ? [run.goneToEnd / 1000] : []));
	// The same, counted from when the end could be known here: after an outage that overlapped the wait.
	const knowableToEnd = runs.flatMap((run) => {
		const ended = run.endedAt;
		if (run.goneToEnd === undefined || ended === undefined) return [];
		const gone = ended - run.goneToEnd;
		const knowable = outages
			.filter((o) => (o.on === "all" || o.on === run.target) && o.from <= ended && o.to >= gone)
			.reduce((at, o) => Math.max(at, o.to), gone);
		return [Math.max(0, ended - knowable) / 1000];
	});
	const waits = runs.flatMap((run) => (run.waited !== undefined ? [run.waited / 1000] : []));
	const longest = runs.reduce((best, run) => ((run.waited ?? -1) > (best?.waited ?? -1) ? run : best), runs[0]);
	const s = (/** @type {number[]} */ v) =>
		v.length
			? `median ${pct(v, 50).toFixed(1)} s (p5 ${pct(v, 5).toFixed(1)}, p95 ${pct(v, 95).toFixed(1)}, max ${Math.max(...v).toFixed(1)}, n=${v.length})`
			: "none";
	console.log("");
	console.log(
		`runs: ${runs.length} dispatched (${refused} dispatches refused${refusals.length ? `: ${refusals.join("; ")}` : ""})`,
	);
	console.log(
		`ends: ${Object.entries(ends)
			.sort()
			.map(([k, v]) => `${k} ${v}`)
			.join(", ")}`,
	);
	console.log(
		`faults injected: ${FAULTS.map((kind) => `${kind} ${injected[kind] ?? 0}`).join(", ")}; none to hit: ${
			Object.entries(skipped)
				.map(([k, v]) => `${k} ${v}`)
				.join(", ") || "0"
		}`,
	);
	console.log(`runs lost (want 0): ${lost}`);
	console.log(
		`events lost or doubled (want 0): ${eventsLost + eventsDoubled} (${eventsLost} lost, ${eventsDoubled} doubled); tool outputs missing from completed runs: ${outputsLost}`,
	);
	console.log(
		`runs non-terminal more than ${GONE_LIMIT_MS / 1000} s after their processes were gone (want 0): ${late}`,
	);
	console.log(`  processes gone -> end recorded: ${s(goneToEnd)}`);
	console.log(
		`  the same from when the end could be known here (after a full disk or, for ssh runs, a stopped sshd that overlapped): ${s(knowableToEnd)}`,
	);
	console.log(
		`longest time a startable run waited: ${longest?.waited !== undefined ? `${(longest.waited / 1000).toFixed(1)} s (${longest.id}, ${longest.target})` : "none seen waiting"}`,
	);
	console.log(
		`  runs seen queued with a free slot of their target, until they started: ${s(waits)}; sampled every ${SAMPLE_MS / 1000} s`,
	);
	const own = process.cpuUsage();
	console.log(
		`the soak's own CPU (sampler, dispatches, faults; not the runs'): ${((own.user + own.system) / 1e6).toFixed(1)} s in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
	);
	console.log(`start: ${startLoad}`);
	console.log(`end:   ${uptime()}`);
} finally {
	await cleanup();
}
