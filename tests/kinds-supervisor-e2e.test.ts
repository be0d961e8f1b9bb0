/**
 * The supervisor decides a target row's questions as it does a local row's: in the run's link on this
 * machine (runner/link/link-supervisor.mjs), with the rules and the model that live here. A real sshd on
 * 127.0.0.1 logs into a second Unix user whose pi talks to the loopback scripted model; the rules and the
 * supervisor model's settings are this machine's only. A rule's answer reaches the far worker in place (the
 * row completes from it, its mirrored session credits the rule), `target is` matches an ssh target and,
 * for a pool's row, both the pool's name and the member's; each decision is a line of supervisor.log and
 * of the row's events. A person who answers first wins (the supervisor's answer comes back rejected), and
 * a question outside the safe set is left to the person with its note on the row.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { updatePolicy } from "../runner/life/policy.mjs";
import { readSupervisorLog } from "../runner/supervisor/supervisor-log.mjs";
import { storePaths } from "../src/board/engine/paths.ts";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { runNotify } from "../src/board/subcommands/notify-command.ts";
import { recordedQuestions, ruleNow } from "../src/board/subcommands/replay.ts";
import { readTranscript } from "../src/board/view-model/transcript.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import type { FauxStep } from "../test-support/faux-script.ts";
import { LOOPBACK_MODEL, LOOPBACK_PROVIDER, writeAgentDir, type ModelServer } from "../test-support/model-server.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import { type Receiver, startReceiver } from "../test-support/receiver.ts";
import { requires, sshdMissing } from "../test-support/requires.ts";
import { startSshBoard, type SshBoard } from "../test-support/ssh-board.ts";
import {
	answersOf,
	attachOpensLocalCopy,
	leftToThePerson,
	modelDecides,
	personAnswersFirst,
	supervisorCellRulesOf,
	supervisorEventsOf,
	supervisorLogOf,
	targetRuleAsksYou,
} from "../test-support/target-helpers.ts";

const missing = sshdMissing();
let fixture: SshBoard | undefined;
let board: BoardEngine;
let model: ModelServer;
let repo: string;
/** A notifier's receiver: what the person hears of the remote rows. */
let receiver: Receiver | undefined;
/** The rows in the order the tests dispatch them, with what the person should hear of each. */
const heard: [string, string][] = [];
/** The rows the rule cell ran to their end, by target: what attach opens. */
const ran = new Map<string, string>();
/** This machine's pi agent dir: the user's rules.md and the supervisor model's settings. */
const agentDir = join(tmpdir(), `pab-linksup-agent-${process.pid}`);
const rulesFile = join(agentDir, "agent-board", "rules.md");
/** Where the person-first cell's files wait: the supervisor model's reply, the worker's turn after the answer. */
const holdDir = join(tmpdir(), `pab-linksup-hold-${process.pid}`);
/** The cells' tags (test-support/target-helpers.ts): a row on h, on pool1, and one here (no target). */
const TAGS = ["h", "pool1", "local"];

const ask = (question: string): FauxStep => ({ toolCall: { name: "ask_user", args: { question } } });

beforeAll(async () => {
	if (missing) return;
	rmSync(holdDir, { recursive: true, force: true });
	mkdirSync(holdDir, { recursive: true });
	fixture = await startSshBoard("pab-linksup-", { env: () => ({ PI_CODING_AGENT_DIR: agentDir }) });
	({ board, model, repo } = fixture);
	writeAgentDir(model, agentDir);
	mkdirSync(join(agentDir, "agent-board"), { recursive: true });
	writeFileSync(
		rulesFile,
		[
			"# Rules",
			"",
			"## Rules",
			'- when target is h and question says "continue": answer "yes, continue"',
			'- when target is pool1 and question says "colour": answer "blue"',
			'- when target is h and question says "size": answer "large"',
			'- when question says "delete": answer "yes"',
			'- when question says "module name": decide',
			'- when target is h and question says "port": ask me',
			"- always: ask me",
			"",
		].join("\n"),
	);
	model.setScript({
		rules: [
			...supervisorCellRulesOf(TAGS, holdDir),
			{ match: "SSH-RULE", steps: [ask("Should I continue with the refactor?"), { text: "Refactored." }] },
			{ match: "POOL-NAME", steps: [ask("Which colour for the button?"), { text: "Coloured." }] },
			{ match: "POOL-MEMBER", steps: [ask("Which size for the cache?"), { text: "Sized." }] },
		],
		fallback: [{ text: "ok" }],
	});
	await board.targets.add("pool1", { kind: "pool", members: "h" });
	receiver = await startReceiver();
	await runNotify(
		{ verb: "add", name: "hook", url: `${receiver.base}/json`, on: "needs-input,answered" },
		board.storeDir,
	);
	await updatePolicy(board.storeDir, (policy) => {
		policy.supervisor = { model: `${LOOPBACK_PROVIDER}/${LOOPBACK_MODEL}` };
	});
}, 180_000);

afterAll(async () => {
	rmSync(holdDir, { recursive: true, force: true });
	rmSync(agentDir, { recursive: true, force: true });
	await receiver?.close();
	if (missing) return;
	await fixture?.cleanup();
});

const logOf = (row: BoardRow) => supervisorLogOf(board, row);

/**
 * The rows of the later cells, dispatched as the first cell starts so that their runs overlap its own (the
 * file's time); each cell still waits for and checks only its own row, and dispatches it if it runs alone.
 */
const early = new Map<string, Promise<BoardRow>>();
function started(prompt: string, target?: string): Promise<BoardRow> {
	const key = `${prompt} on ${target ?? "local"}`;
	let row = early.get(key);
	if (!row) {
		row = board.dispatch({ prompt, cwd: repo, ...(target ? { target } : {}) });
		// Awaited by its cell; a refusal fails that cell, not the one that started it.
		row.catch(() => undefined);
		early.set(key, row);
	}
	return row;
}

/** The cells' rows on `target` are the ones the first cell started for them, when it did. */
const startOn = (target?: string) => (prompt: string) => started(prompt, target);

/** A destructive question on `target` (here without one) is left to the person, who is told of it. */
async function leftToPerson(tag: string, target?: string): Promise<BoardRow> {
	const { waiting, row } = await leftToThePerson(board, { tag, target, repo, start: startOn(target) });
	heard.push(["needs-input", waiting.id]);
	return row;
}

/** A question the `decide` rule (line 8) gives the supervisor model: answered by it, the person told. */
async function decidedByModel(target: string): Promise<BoardRow> {
	const row = await modelDecides(board, model, {
		tag: target,
		target,
		repo,
		rule: `${rulesFile}:8`,
		start: startOn(target),
	});
	heard.push(["answered", row.id]);
	return row;
}

/**
 * Attach to the finished row of the rule cell on `target` (test-support's attachOpensLocalCopy), and the
 * copy is the far session's: its header the far one with the local worktree for cwd (the far path stays
 * only in what the far worker was told), its entries the far session's byte for byte.
 */
async function attachesHere(target: string): Promise<void> {
	const row = await board.get(ran.get(target) ?? "");
	if (!row) throw new Error(`no row ran on ${target} in the rule cell`);
	// The far side's session, read on the host as its user: its header's cwd is the host's path.
	const far = await fixture?.host.ssh(`cat .agent-board/store/sessions/${row.id}/${row.id}.jsonl`);
	expect(far?.code, far?.stderr).toBe(0);
	const farLines = (far?.stdout ?? "").split("\n");
	const farCwd = (JSON.parse(farLines[0] ?? "{}") as { cwd?: string }).cwd ?? "";
	expect(farCwd).toContain(".agent-board/work/");
	const { copied } = await attachOpensLocalCopy(board, row, {
		tag: target,
		from: join(fixture?.local ?? "", "mine.jsonl"),
		cwd: fixture?.local ?? "",
		agentDir,
		ended: target === "h" ? "Refactored." : "Coloured.",
	});
	const worktree = row.worktreePath ?? "";
	expect(JSON.parse(copied.split("\n")[0] ?? "{}")).toEqual({ ...JSON.parse(farLines[0] ?? "{}"), cwd: worktree });
	expect(copied.split("\n").slice(1)).toEqual(farLines.slice(1));
}

describe("the supervisor decides a target row's questions in its link", { timeout: 300_000 }, () => {
	it("answers by rule on an ssh target and on a pool's member, `target is` matching the pool and the member", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const cases = [
			{ prompt: "SSH-RULE refactor", target: "h", answer: "yes, continue", line: 4, done: "Refactored." },
			{ prompt: "POOL-NAME button", target: "pool1", answer: "blue", line: 5, done: "Coloured." },
			{ prompt: "POOL-MEMBER cache", target: "pool1", answer: "large", line: 6, done: "Sized." },
		];
		void started("NEVER-pool1 clean", "pool1");
		void started("MODEL-h split", "h");
		void started("MODEL-pool1 split", "pool1");
		const ids: string[] = [];
		for (const one of cases) {
			const dispatched = await board.dispatch({ prompt: one.prompt, cwd: repo, target: one.target });
			const row = await waitDone(board, dispatched.id, 120_000);
			if (!ran.has(one.target)) ran.set(one.target, row.id);
			ids.push(row.id);
			expect(row.state, one.prompt).toBe("completed");
			// The far worker continued from the answer in place: the mirrored session has it, credited to the rule.
			expect(await answersOf(row)).toEqual([
				{ role: "user", text: one.answer, sent: "answer", by: `rule ${rulesFile}:${one.line}` },
			]);
			expect((await readTranscript(row.sessionFile)).at(-1)?.text).toBe(one.done);
			expect(logOf(row)).toMatchObject([
				{ decision: "answered", answer: one.answer, rule: `${rulesFile}:${one.line}` },
			]);
			expect(supervisorEventsOf(row)).toMatchObject([
				{ decision: "answered", text: `supervisor answered: ${one.answer} (${rulesFile}:${one.line})` },
			]);
			expect(row.supervisorNote).toBeUndefined();
			heard.push(["answered", row.id]);
		}
		// No rule left any of them to the person.
		const lines = readSupervisorLog(board.storeDir).filter((line) => ids.includes(String(line.row)));
		expect(lines.map((line) => line.decision)).toEqual(["answered", "answered", "answered"]);
		// The replay credits the supervisor, and the rules now answer the same (the pool's member included).
		const replayed = recordedQuestions(storePaths(board.storeDir), board.storeDir, 0).filter((question) =>
			ids.includes(question.meta.id),
		);
		expect(replayed.map((question) => question.outcome)).toEqual(
			cases.map((one) => ({
				kind: "answered",
				text: one.answer,
				by: "supervisor",
				rule: `${rulesFile}:${one.line}`,
			})),
		);
		expect(replayed.map((question) => ruleNow(question, agentDir, new Map()).answer)).toEqual(
			cases.map((one) => one.answer),
		);
	});

	it("leaves a question outside the safe set to the person, with its note, whatever a rule says, on a target as here", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await leftToPerson("h", "h");
		await leftToPerson("local");
	});

	it("leaves a question outside the safe set to the person on a pool's member", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const row = await leftToPerson("pool1", "pool1");
		expect(row.host).toBe("h");
	});

	it("a `target is` rule that asks you leaves an ssh row's question to the person, its note naming that rule", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const row = await targetRuleAsksYou(board, { tag: "h", target: "h", repo, rule: `${rulesFile}:9` });
		heard.push(["needs-input", row.id]);
	});

	it("the same rule, naming the member, leaves a pool's row on that member to the person", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const row = await targetRuleAsksYou(board, { tag: "pool1", target: "pool1", repo, rule: `${rulesFile}:9` });
		heard.push(["needs-input", row.id]);
		expect(row.host).toBe("h");
	});

	it("a person who answers first wins: the supervisor's later answer is rejected", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await personAnswersFirst(board, model, { tag: "h", target: "h", repo, holdDir, rule: `${rulesFile}:8` });
	});

	it("a question a `decide` rule gives the supervisor model is answered by it on an ssh target, credited to the model", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await decidedByModel("h");
	});

	it("a question a `decide` rule gives the supervisor model is answered by it on a pool's member", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		expect((await decidedByModel("pool1")).host).toBe("h");
	});

	it("attach to a row that ran on an ssh target opens a local copy of its session in its local worktree", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await attachesHere("h");
	});

	it("attach to a row a pool placed on its member opens a local copy of its session in its local worktree", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await attachesHere("pool1");
	});

	it("the person hears a question once the supervisor leaves it to them, and an answer given for them", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		// The question the person answered first was held while the supervisor decided: nothing went out for it.
		await waitFor(
			() => (receiver?.delivered("/json").length ?? 0) >= heard.length,
			"the notices of the remote rows",
			60_000,
		);
		await new Promise((resolve) => setTimeout(resolve, 2000));
		const got = (receiver?.delivered("/json") ?? []).map((r) => JSON.parse(r.body) as Record<string, unknown>);
		// Rows of different cells ran side by side: each row's notices, in any order between rows.
		expect(got.map((body) => [body.event, body.row]).sort()).toEqual([...heard].sort());
		expect(got.find((body) => body.row === ran.get("h"))?.text).toBe(
			`"Should I continue with the refactor?" -> "yes, continue" by rule ${rulesFile}:4`,
		);
	});
});
