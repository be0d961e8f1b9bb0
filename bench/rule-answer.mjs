// Question -> answer in place by a rule, on every kind of row place (#36): this machine, an ssh target over
// loopback, a pool's member, a podman container target on this machine and one on a remote engine
// (bench/_kinds.mjs; a kind whose prerequisite is missing is left out, saying why). Each run is a row of
// its own through the board as a user dispatches it, a real pi worker whose scripted model asks one
// question that a `target is <name>` rule of this machine's rules.md answers: the runner decides a local
// row's, the run's link on this machine a target row's (runner/link/link-supervisor.mjs). Measured as the
// worker's runner saw it: its ask_user start -> its end (both the far runner's clock for a target's row,
// mirrored here), so it holds the mirror's trip here, the decision, the answer's trip back and its
// delivery. Each answer is checked in supervisor.log (the rule that answered it) and the row completes.
// Needs root and sshd. Run:
// nice -n 10 node --experimental-strip-types bench/rule-answer.mjs   (BENCH_RUNS rows of each, default 12)
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { updatePolicy } from "../runner/life/policy.mjs";
import { readSupervisorLog } from "../runner/supervisor/supervisor-log.mjs";
import { waitDone } from "../test-support/board-helpers.ts";
import { LOOPBACK_MODEL, LOOPBACK_PROVIDER } from "../test-support/model-server.ts";
import { sshdMissing } from "../test-support/requires.ts";
import { startKinds } from "./_kinds.mjs";
import { load, pct } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 12);
const missing = sshdMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	process.exit(0);
}

console.log(load());
/** A kind's name in the rules: `local` is this machine. @param {string | undefined} target */
const placeOf = (target) => target ?? "local";
const { repo, agentDir, board, kinds, cleanup } = await startKinds("pab-bench-rule-", {
	script: {
		rules: [
			{
				match: "BENCH-",
				steps: [{ toolCall: { name: "ask_user", args: { question: "Should I continue?" } } }, { text: "done" }],
			},
		],
	},
});

/** @param {string} runDir */
const events = (runDir) =>
	readFileSync(join(runDir, "events.jsonl"), "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line));

let n = 0;
/** One row, one question a rule answers: its ask_user start -> end. @param {string | undefined} target */
async function oneRun(target) {
	n += 1;
	const place = placeOf(target);
	const prompt = `BENCH-${place}-${n}`;
	const dispatched = await board.dispatch({ prompt, cwd: repo, ...(target ? { target } : {}) });
	const row = await waitDone(board, dispatched.id, 180_000);
	if (row.state !== "completed") throw new Error(`${prompt} ended ${row.state}: ${row.error ?? ""}`);
	const answered = readSupervisorLog(board.storeDir).filter((line) => line.row === row.id);
	if (answered.length !== 1 || answered[0]?.decision !== "answered" || answered[0].answer !== `yes, on ${place}`)
		throw new Error(`${prompt}: expected the ${place} rule's answer, supervisor.log has ${JSON.stringify(answered)}`);
	const asks = events(String(row.runDir)).filter((event) => event.toolName === "ask_user");
	const start = asks.find((event) => event.type === "tool_execution_start")?.at;
	const end = asks.find((event) => event.type === "tool_execution_end")?.at;
	if (typeof start !== "number" || typeof end !== "number") throw new Error(`${prompt}: no ask_user start and end`);
	return end - start;
}

try {
	// One rule per place; a pool's row matches the pool's name and its member's, so the pool's comes first.
	const places = [...new Set(["local", "pool1", ...kinds.map((kind) => placeOf(kind.target))])];
	mkdirSync(join(agentDir, "agent-board"), { recursive: true });
	writeFileSync(
		join(agentDir, "agent-board", "rules.md"),
		[
			"## Rules",
			...places.map((place) => `- when target is ${place} and question says "continue": answer "yes, on ${place}"`),
			"- always: ask me",
			"",
		].join("\n"),
	);
	await updatePolicy(board.storeDir, (policy) => {
		policy.supervisor = { model: `${LOOPBACK_PROVIDER}/${LOOPBACK_MODEL}` };
	});
	console.log(`set up: ${kinds.map((kind) => kind.name).join(", ")}; ${load()}`);
	for (const { name, target } of kinds) {
		const before = load();
		await oneRun(target); // warm: the ssh master, the station, pi's first start there
		const ms = [];
		for (let i = 0; i < RUNS; i++) ms.push(await oneRun(target));
		console.log(
			`${name}: question -> answer in place by a rule, n=${ms.length}: p50 ${pct(ms, 50)} ms, p95 ${pct(ms, 95)} ms, min-max ${Math.min(...ms)}-${Math.max(...ms)} ms; ${before} -> ${load()}`,
		);
	}
} finally {
	await cleanup();
}
process.exit(0);
