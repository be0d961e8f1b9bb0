// A fleet: bursts of N remote rows placed by a pool over four loopback hosts (four Unix users, each
// behind its own sshd with the stock MaxSessions 10 / MaxStartups 10:30:100, LogLevel VERBOSE), and
// the same N rows on this machine, through the board engine and the real pi worker. The loopback
// model holds every answer until all N rows have asked (so the N run at once), then streams each in
// four parts 400 ms apart. Per size: the processes here that the remote rows cost (the links, their
// ssh and git, the ssh masters) with their summed PSS and CPU per row; each host's ssh sessions at
// once, connections and "no more sessions" (its sshd's log); dispatch -> first model request; a
// streamed part sent -> the row's local status.json showing it. Remote and local phases alternate
// which goes first. Needs root and sshd.
// Run: node --experimental-strip-types bench/fleet.mjs   (BENCH_SIZES=1,8 for a quick run,
// BENCH_REPS=3 to repeat every size, BENCH_PER_HOST=10 slots per host)
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { startFleet, stopFleet } from "../test-support/fleet-hosts.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir } from "../test-support/model-server.ts";
import { PI_CLI } from "../test-support/pi-harness.ts";
import { sshdMissing } from "../test-support/requires.ts";
import { logLines, phaseSessions, processesWhere, sampleProcesses } from "./_fleet-measure.mjs";
import { load, pct, spread } from "./_stats.mjs";

const SIZES = (process.env.BENCH_SIZES ?? "1,8,24,40").split(",").map(Number);
const REPS = Number(process.env.BENCH_REPS ?? 1);
const PER_HOST = Number(process.env.BENCH_PER_HOST ?? 10);
const HOSTS = ["fa", "fb", "fc", "fd"];
const CHUNK_MS = 400;
const PHASE_TIMEOUT_MS = 15 * 60_000;
/** A dispatch of local rows starts at most this many (the attempt limit without a target). */
const LOCAL_BURST = 8;
const MARKS = ["PART-A", "PART-B", "PART-C", "PART-D"];
// Eight words: the model server streams them as four parts, one mark each.
const ANSWER = MARKS.map((mark) => `${mark} done.`).join(" ");

const missing = sshdMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	process.exit(0);
}
console.log(
	`start: ${load()}; sizes ${SIZES.join("/")}; ${HOSTS.length} hosts x ${PER_HOST} slots; parts every ${CHUNK_MS} ms`,
);

const root = mkdtempSync(join(tmpdir(), "pab-bench-fleet-"));
const storeDir = join(root, "store");
const model = await startModelServer({
	chunkDelayMs: CHUNK_MS,
	script: { rules: [{ match: "FLEET", steps: [{ text: ANSWER }] }], fallback: [{ text: "ok" }] },
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
// This process's board reads, ticks and measures; dispatches come from a process of their own.
const board = createBoardService({
	storeDir,
	piCommand: [process.execPath, PI_CLI],
	maxConcurrent: Math.max(...SIZES),
	env: boardEnv,
});
/** @type {import("../test-support/fleet-hosts.ts").FleetHost[]} */
let fleet = [];

/** @typedef {import("../src/board/engine/types.ts").BoardRow} BoardRow */

/** The processes here that remote rows cost: links, the ssh masters and clients, and what they start. */
const remoteProcesses = () =>
	processesWhere(
		(p) => p.cmd.includes(join(storeDir, "targets")) || fleet.some((f) => p.cmd.includes(f.host.configFile)),
	);
/** The processes here that local rows cost: their runners and pi workers (not the dispatch and its git: neither side counts those). */
const localProcesses = () => {
	const remote = new Set(remoteProcesses().map((p) => p.pid));
	return processesWhere(
		(p) =>
			p.cmd.includes(storeDir) && !p.cmd.includes("_fleet-dispatch.mjs") && p.comm !== "git" && !remote.has(p.pid),
	);
};

/** The row a model request comes from: pi's system prompt names its working directory (the row's worktree). @param {import("../test-support/model-server.ts").ModelRequest} request @param {string[]} ids */
function rowOf(request, ids) {
	const system = JSON.stringify(request.messages.filter((m) => m.role === "system"));
	return ids.find((id) => system.includes(id));
}

/**
 * Watches each row's local status.json (the file the board reads) and notes when each mark first shows,
 * in the streamed text or in the finished answer.
 * @param {BoardRow[]} rows
 */
function watchStatus(rows) {
	/** @type {Map<string, Map<string, number>>} */
	const seen = new Map(rows.map((row) => [row.id, new Map()]));
	/** @type {import("node:fs").FSWatcher[]} */
	const watchers = [];
	/** @param {BoardRow} row */
	const look = (row) => {
		let text = "";
		try {
			const status = JSON.parse(readFileSync(join(row.runDir ?? "", "status.json"), "utf8"));
			text = `${status.live?.text ?? ""} ${status.latestAssistant ?? ""}`;
		} catch {
			return; // Mid-write or not there yet.
		}
		const marks = seen.get(row.id);
		for (const mark of MARKS) if (marks && !marks.has(mark) && text.includes(mark)) marks.set(mark, Date.now());
	};
	const unwatched = new Set(rows);
	const attach = () => {
		for (const row of unwatched) {
			try {
				watchers.push(watch(row.runDir ?? "", () => look(row)));
				unwatched.delete(row);
			} catch {
				// The run dir is not there yet.
			}
		}
	};
	attach();
	// A fallback look (a watch can coalesce a rename): slow, so it does not decide the figure.
	const timer = setInterval(() => {
		attach();
		for (const row of rows) look(row);
	}, 500);
	return {
		seen,
		stop() {
			clearInterval(timer);
			for (const w of watchers) w.close();
		},
	};
}

/** The board's tick while a phase runs: the settle step (it pumps queues and places pool runs). */
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
 * Dispatches N rows at once from a process of its own; remote: one burst to the pool, local: bursts of
 * LOCAL_BURST at once. Returns when the dispatch began and ended (its own clock reads) and the rows.
 * @param {"remote" | "local"} where @param {number} n @param {string} prompt
 */
async function dispatch(where, n, prompt) {
	const counts = [];
	for (let left = n; left > 0; left -= where === "remote" ? n : LOCAL_BURST)
		counts.push(where === "remote" ? n : Math.min(LOCAL_BURST, left));
	const calls = counts.map((count) => ({
		prompt,
		cwd: repo,
		count,
		...(where === "remote" ? { target: "fleet" } : { worktreeMode: "worktree" }),
	}));
	const child = spawn(
		process.execPath,
		[
			"--experimental-strip-types",
			join(import.meta.dirname, "_fleet-dispatch.mjs"),
			JSON.stringify({ storeDir, maxConcurrent: Math.max(...SIZES), calls }),
		],
		{ env: boardEnv, stdio: ["ignore", "pipe", "inherit"] },
	);
	let out = "";
	child.stdout.on("data", (chunk) => (out += String(chunk)));
	const code = await new Promise((resolve) => child.on("close", resolve));
	if (code !== 0) throw new Error(`dispatch of ${n} ${where} rows exited ${code}`);
	/** @type {{ t0: number, t1: number, ids: string[] }} */
	const result = JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
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
		if (Date.now() > deadline) {
			const stuck = rows.filter((row) => row && (row.alive || row.state === "queued" || row.state === "working"));
			throw new Error(
				`${stuck.length} rows not ended after ${PHASE_TIMEOUT_MS / 60_000} min: ${stuck
					.slice(0, 5)
					.map((row) => `${row?.id} ${row?.state} ${row?.host ?? ""} ${row?.summary ?? ""}`)
					.join("; ")}`,
			);
		}
		await new Promise((resolve) => setTimeout(resolve, 1000));
	}
}

let phaseNo = 0;
/** One burst of N rows, remote or local, measured. @param {"remote" | "local"} where @param {number} n */
async function phase(where, n) {
	phaseNo += 1;
	const prompt = `FLEET ${where} ${n} #${phaseNo}`;
	const logsFrom = fleet.map((f) => logLines(join(f.host.root, "sshd.log")));
	const stopTick = tick();
	const read = where === "remote" ? remoteProcesses : localProcesses;
	const procs = sampleProcesses(read, 1000);
	// Every row's answer waits until all N have asked: the N run at once, and are measured so.
	const go = model.hold();
	const { t0, t1, rows } = await dispatch(where, n, prompt);
	const dispatchMs = t1 - t0;
	const status = watchStatus(rows);
	const asked = () => model.requests().filter((r) => r.prompt === prompt).length;
	for (const deadline = Date.now() + PHASE_TIMEOUT_MS; asked() < n && Date.now() < deadline; )
		await new Promise((resolve) => setTimeout(resolve, 100));
	const allRunning = read();
	go();
	const ended = await waitEnded(rows.map((row) => row.id));
	const cost = procs.stop();
	await stopTick();
	status.stop();
	const ids = rows.map((row) => row.id);
	const requests = model.requests().filter((r) => r.prompt === prompt);
	const firstRequest = requests.map((r) => r.at - t0);
	const partToStatus = [];
	let unmatched = 0;
	for (const request of requests) {
		const marks = status.seen.get(rowOf(request, ids) ?? "");
		if (!marks) {
			unmatched += 1;
			continue;
		}
		for (const sent of request.sent) {
			const mark = MARKS.find((m) => sent.text.includes(m));
			const shown = mark ? marks.get(mark) : undefined;
			if (shown !== undefined) partToStatus.push(shown - sent.at);
		}
	}
	const sessions = fleet.map((f, i) => ({
		name: f.name,
		...phaseSessions(join(f.host.root, "sshd.log"), logsFrom[i] ?? 0),
	}));
	const busy = cost.samples.filter((s) => s.count > 0);
	const peak = busy.reduce(
		(a, b) => (b.pssKb > a.pssKb ? b : a),
		cost.samples[0] ?? { pssKb: 0, count: 0, comms: "", at: 0 },
	);
	return {
		where,
		n,
		dispatchMs,
		firstRequest,
		partToStatus,
		unmatched,
		completed: ended.filter((row) => row.state === "completed").length,
		faults: ended
			.filter((row) => /fatal:|bad object/.test(JSON.stringify(row)))
			.map((row) => JSON.stringify(/(?:fatal:|bad object)[^"]{0,160}/.exec(JSON.stringify(row))?.[0])),
		notCompleted: ended
			.filter((row) => row.state !== "completed")
			.map((row) => `${row.id} ${row.state}: ${row.error ?? row.summary ?? ""}`),
		hosts: new Map(HOSTS.map((h) => [h, ended.filter((row) => row.host === h).length])),
		pssPerRowMb: busy.map((s) => s.pssKb / 1024 / n),
		allRunning: { asked: asked(), count: allRunning.length, pssKb: allRunning.reduce((sum, p) => sum + p.pssKb, 0) },
		peak,
		procCounts: busy.map((s) => s.count),
		cpuSecondsPerRow: cost.cpuSeconds / n,
		seconds: cost.seconds,
		sessions,
		load: load(),
	};
}

/** @param {Awaited<ReturnType<typeof phase>>} r */
function report(r) {
	const pad = r.where.padEnd(6);
	const lines = [
		`  ${pad} ${r.completed}/${r.n} completed${r.notCompleted.length ? ` (NOT: ${r.notCompleted.slice(0, 3).join("; ")})` : ""}${r.faults.length ? `; ${r.faults.length} rows mention a git fault: ${r.faults[0]}` : ""}; dispatch calls took ${r.dispatchMs} ms; phase ${r.seconds.toFixed(0)} s; ${r.load}`,
		`  ${pad} processes here: ${pct(r.procCounts, 50)} (most ${Math.max(0, ...r.procCounts)}; at peak PSS: ${r.peak.comms || "none"})`,
		`  ${pad} with all ${r.allRunning.asked} asking at once: ${r.allRunning.count} processes here, summed PSS ${(r.allRunning.pssKb / 1024).toFixed(1)} MB = ${(r.allRunning.pssKb / 1024 / r.n).toFixed(2)} MB per row`,
		`  ${pad} summed PSS per row over the phase (1 s samples): ${spread(r.pssPerRowMb, "MB")}; peak ${(r.peak.pssKb / 1024).toFixed(1)} MB in all`,
		`  ${pad} CPU per row: ${(r.cpuSecondsPerRow * 1000).toFixed(0)} ms (${((r.cpuSecondsPerRow * r.n * 100) / r.seconds).toFixed(1)} % of a core over the phase, all ${r.n} rows)`,
		`  ${pad} dispatch -> first request: p50 ${pct(r.firstRequest, 50)} ms, p95 ${pct(r.firstRequest, 95)} ms (${spread(r.firstRequest)})`,
		`  ${pad} part sent -> local status: p50 ${pct(r.partToStatus, 50)} ms, p95 ${pct(r.partToStatus, 95)} ms (${spread(r.partToStatus)})${r.unmatched ? `; ${r.unmatched} requests matched no row` : ""}`,
	];
	if (r.where === "remote") {
		lines.push(`  ${pad} placed: ${[...r.hosts].map(([h, c]) => `${h} ${c}`).join(", ")}`);
		lines.push(
			`  ${pad} ssh per host (sshd log): ${r.sessions.map((s) => `${s.name} ${s.atOnce} sessions at once (${s.perConnection} on one connection), ${s.connections} new connections, ${s.sessions} sessions started, ${s.refused} "no more sessions"`).join("; ")}`,
		);
	}
	console.log(lines.join("\n"));
}

try {
	const setupStart = Date.now();
	fleet = await startFleet(board, model, HOSTS, PER_HOST);
	await board.targets.add("fleet", { kind: "pool", members: HOSTS.join(",") });
	// Warm: a link per host and its ssh master, and pi's first start on each side (not counted).
	await phase("remote", HOSTS.length);
	await phase("local", 1);
	console.log(`set-up and warm-up ${((Date.now() - setupStart) / 1000).toFixed(0)} s; ${load()}`);
	/** @type {Awaited<ReturnType<typeof phase>>[]} */
	const results = [];
	for (let rep = 0; rep < REPS; rep++) {
		for (const [i, n] of SIZES.entries()) {
			/** @type {("remote" | "local")[]} */
			const order = (i + rep) % 2 === 0 ? ["remote", "local"] : ["local", "remote"];
			console.log(`\n${n} rows (${order[0]} first)${REPS > 1 ? `, repetition ${rep + 1}/${REPS}` : ""}`);
			for (const where of order) {
				const result = await phase(where, n);
				report(result);
				results.push(result);
			}
		}
	}
	console.log(
		`\nsummary over ${REPS} repetition(s) (targets: PSS per remote row <= 3 MB at 40, <= 3 ssh sessions per host, 0 refused, burst first request within 2x local)`,
	);
	for (const n of SIZES) {
		const of = (/** @type {"remote" | "local"} */ where) => results.filter((r) => r.where === where && r.n === n);
		const [remote, local] = [of("remote"), of("local")];
		const pooled = (
			/** @type {typeof remote} */ set,
			/** @type {(r: (typeof remote)[number]) => number[]} */ values,
		) => set.flatMap(values);
		const first = { remote: pooled(remote, (r) => r.firstRequest), local: pooled(local, (r) => r.firstRequest) };
		const part = { remote: pooled(remote, (r) => r.partToStatus), local: pooled(local, (r) => r.partToStatus) };
		const ratio = (/** @type {number} */ p) => (pct(first.remote, p) / pct(first.local, p)).toFixed(2);
		const sessions = remote.flatMap((r) => r.sessions);
		const done = (/** @type {typeof remote} */ set) =>
			`${set.reduce((a, r) => a + r.completed, 0)}/${set.reduce((a, r) => a + r.n, 0)}`;
		console.log(
			`  ${n} rows: completed remote ${done(remote)}, local ${done(local)}; remote rows mentioning a git fault: ${remote.reduce((a, r) => a + r.faults.length, 0)}`,
		);
		console.log(
			`    PSS per remote row, all running: ${spread(
				remote.map((r) => r.allRunning.pssKb / 1024 / n),
				"MB",
			)} (local row: ${spread(
				local.map((r) => r.allRunning.pssKb / 1024 / n),
				"MB",
			)})`,
		);
		console.log(
			`    processes here for the remote rows, all running: ${spread(
				remote.map((r) => r.allRunning.count),
				"processes",
			)}; CPU per remote row ${spread(remote.map((r) => r.cpuSecondsPerRow * 1000))} (local row ${spread(local.map((r) => r.cpuSecondsPerRow * 1000))})`,
		);
		console.log(
			`    ssh per host: at most ${Math.max(0, ...sessions.map((s) => s.atOnce))} sessions at once, ${sessions.reduce((a, s) => a + s.connections, 0)} new connections, ${sessions.reduce((a, s) => a + s.refused, 0)} "no more sessions"`,
		);
		console.log(
			`    dispatch -> first request: remote p50 ${pct(first.remote, 50)} p95 ${pct(first.remote, 95)} ms, local p50 ${pct(first.local, 50)} p95 ${pct(first.local, 95)} ms: remote/local p50 ${ratio(50)}x, p95 ${ratio(95)}x`,
		);
		console.log(
			`    part sent -> local status: remote p50 ${pct(part.remote, 50)} p95 ${pct(part.remote, 95)} ms, local p50 ${pct(part.local, 50)} p95 ${pct(part.local, 95)} ms`,
		);
	}
	const linkLogs = HOSTS.map((h) => join(storeDir, "targets", h, "link", "link.log"));
	const faultLines = linkLogs.flatMap((file) => {
		try {
			return readFileSync(file, "utf8")
				.split("\n")
				.filter((line) => /fatal|error|refused|cannot/i.test(line));
		} catch {
			return [];
		}
	});
	console.log(
		`links' logs: ${faultLines.length} lines naming a fault${faultLines.length ? `, first: ${JSON.stringify(faultLines.slice(0, 3))}` : ""}`,
	);
	console.log(`end: ${load()}`);
} finally {
	await stopFleet(fleet);
	await model.close();
	rmSync(root, { recursive: true, force: true });
}
