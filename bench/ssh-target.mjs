// A row on this machine vs a row on an ssh target over loopback (sshd on 127.0.0.1, a second Unix
// user), both through the board as a user dispatches: dispatch -> first model request, reply (an
// answer in place) -> the next model request, and what a row waiting for its answer costs while idle
// (processes and CPU on this machine, and on the host). The ssh master is warm (one run first, not
// counted). Same loopback model, same extension. Needs root and sshd. Run with
// --experimental-strip-types (bench/run-all.mjs does).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir } from "../test-support/model-server.ts";
import { PI_CLI, waitFor } from "../test-support/pi-harness.ts";
import { sshdMissing } from "../test-support/requires.ts";
import { startSshHost } from "../test-support/sshd.ts";
import { load, spread } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 10_000);
const missing = sshdMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	process.exit(0);
}

const root = mkdtempSync(join(tmpdir(), "pab-bench-ssh-"));
const model = await startModelServer({
	script: {
		rules: [
			{
				match: "BENCH",
				steps: [{ toolCall: { name: "ask_user", args: { question: "Go on?" } } }, { text: "done" }],
			},
		],
		fallback: [{ text: "ok" }],
	},
});
const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
const agentDir = writeAgentDir(model, join(root, "agent"));
const host = await startSshHost();
host.user.writePiConfig({ models: model.modelsJson(), auth: model.authJson(), settings: model.settingsJson() });
const board = createBoardService({
	storeDir: join(root, "store"),
	piCommand: [process.execPath, PI_CLI],
	maxConcurrent: 8,
	env: {
		...process.env,
		PI_CODING_AGENT_DIR: agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
	},
});
await board.targets.add("lo", { kind: "ssh", host: host.alias, sshConfig: host.configFile, max: 8 });
const installed = await board.targets.check("lo", { install: true });
if (!installed.ok) throw new Error(`target check failed: ${JSON.stringify(installed.items.filter((i) => !i.ok))}`);
let n = 0;

/** @param {string} id @param {(row: import("../src/board/engine/types.ts").BoardRow) => boolean} test @param {string} what */
const rowWhere = (id, test, what) =>
	waitFor(
		async () => {
			const row = await board.get(id);
			return row && test(row) ? row : undefined;
		},
		what,
		120_000,
		20,
	);

/** One row: dispatch -> first request; answer -> next request. @param {string | undefined} target */
async function oneRun(target) {
	n += 1;
	const prompt = `BENCH-${n}`;
	const t0 = Date.now();
	const row = await board.dispatch({ prompt, cwd: repo, worktreeMode: "worktree", ...(target ? { target } : {}) });
	const first = await model.waitForRequest((r) => r.prompt === prompt, prompt, 120_000);
	await rowWhere(row.id, (r) => r.state === "needs_input" && r.alive, `${prompt} to ask`);
	const answer = `ANSWER-${n}`;
	const t1 = Date.now();
	await board.reply(row.id, answer);
	const next = await model.waitForRequest((r) => JSON.stringify(r.messages).includes(answer), answer, 120_000);
	await rowWhere(row.id, (r) => !r.alive && r.state === "completed", `${prompt} to finish`);
	return { start: first.at - t0, reply: next.at - t1 };
}

/** @param {string | undefined} target */
async function series(target) {
	await oneRun(target);
	const start = [];
	const reply = [];
	for (let i = 0; i < RUNS; i++) {
		const result = await oneRun(target);
		start.push(result.start);
		reply.push(result.reply);
	}
	return { start, reply };
}

/** utime+stime (clock ticks) of pids. @param {number[]} pids */
function ticks(pids) {
	let total = 0;
	for (const pid of pids) {
		try {
			const rest = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
			total += Number(rest[11]) + Number(rest[12]);
		} catch {
			// Gone.
		}
	}
	return total;
}

/** A run's processes on this side (tagged with its run id, not the host user's: both ends are this machine). @param {string} runId */
function runPids(runId) {
	const out = [];
	for (const name of execFileSync("ls", ["/proc"], { encoding: "utf8" }).split("\n")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid <= 1) continue;
		try {
			const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
			if (
				uid !== host.user.uid &&
				readFileSync(`/proc/${pid}/environ`, "utf8").includes(`AGENT_BOARD_RUN_ID=${runId}`)
			)
				out.push(pid);
		} catch {
			// Gone or not ours to read.
		}
	}
	return out;
}

/** @param {number} pid */
function children(pid) {
	try {
		return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
			.split("\n")
			.map(Number)
			.filter(Boolean);
	} catch {
		return []; // ps exits 1 when there are none
	}
}
/** @param {number} pid */
const comm = (pid) => readFileSync(`/proc/${pid}/comm`, "utf8").trim();

/** CPU % of a waiting row over IDLE_MS: here (its tagged processes and their ssh children) and at the host. @param {string | undefined} target */
async function idleCost(target) {
	n += 1;
	const prompt = `BENCH-${n}`;
	const row = await board.dispatch({ prompt, cwd: repo, worktreeMode: "worktree", ...(target ? { target } : {}) });
	await rowWhere(row.id, (r) => r.state === "needs_input" && r.alive, `${prompt} to ask`);
	const tagged = runPids(row.currentRunId ?? "");
	const here = [...tagged, ...tagged.flatMap(children).filter((pid) => comm(pid) === "ssh")];
	const there = target ? host.user.processes() : [];
	const hz = 100;
	const [a, b] = [ticks(here), ticks(there)];
	await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
	const cpu = (/** @type {number} */ before, /** @type {number[]} */ pids) =>
		(((ticks(pids) - before) / hz) * 1000 * 100) / IDLE_MS;
	const result = {
		here: here.map(comm).sort().join(" "),
		hereCpu: cpu(a, here),
		there: there.map(comm).sort().join(" "),
		thereCpu: cpu(b, there),
	};
	await board.reply(row.id, "stop waiting");
	await rowWhere(row.id, (r) => !r.alive, `${prompt} to end`);
	return result;
}

try {
	const local = await series(undefined);
	const ssh = await series("lo");
	const median = (/** @type {number[]} */ v) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)] ?? NaN;
	console.log(`dispatch -> first model request   local: ${spread(local.start)}`);
	console.log(
		`                                  ssh:   ${spread(ssh.start)}  (adds ${(median(ssh.start) - median(local.start)).toFixed(0)} ms, median)`,
	);
	console.log(`answer -> next model request      local: ${spread(local.reply)}`);
	console.log(
		`                                  ssh:   ${spread(ssh.reply)}  (adds ${(median(ssh.reply) - median(local.reply)).toFixed(0)} ms, median)`,
	);
	const idleLocal = await idleCost(undefined);
	const idleSsh = await idleCost("lo");
	console.log(
		`idle row waiting ${IDLE_MS / 1000} s, local: here [${idleLocal.here}] ${idleLocal.hereCpu.toFixed(2)} % CPU`,
	);
	console.log(
		`idle row waiting ${IDLE_MS / 1000} s, ssh:   here [${idleSsh.here}] ${idleSsh.hereCpu.toFixed(2)} % CPU; host user [${idleSsh.there}] ${idleSsh.thereCpu.toFixed(2)} % CPU`,
	);
	console.log(load());
} finally {
	await host.cleanup();
	await model.close();
	rmSync(root, { recursive: true, force: true });
}
