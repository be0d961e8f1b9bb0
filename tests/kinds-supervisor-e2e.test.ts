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
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

const missing = sshdMissing();
let fixture: SshBoard | undefined;
let board: BoardEngine;
let model: ModelServer;
let repo: string;
/** A notifier's receiver: what the person hears of the remote rows. */
let receiver: Receiver | undefined;
/** The rows in the order the tests dispatch them, with what the person should hear of each. */
const heard: [string, string][] = [];
/** This machine's pi agent dir: the user's rules.md and the supervisor model's settings. */
const agentDir = join(tmpdir(), `pab-linksup-agent-${process.pid}`);
const rulesFile = join(agentDir, "agent-board", "rules.md");
/** What lets the supervisor model reply (the person answers first while it waits). */
const release = join(tmpdir(), `pab-linksup-release-${process.pid}`);
/** What lets the worker go on after the answer (its run stays open until the supervisor's answer is receipted). */
const goOn = join(tmpdir(), `pab-linksup-go-on-${process.pid}`);

const ask = (question: string): FauxStep => ({ toolCall: { name: "ask_user", args: { question } } });

beforeAll(async () => {
	if (missing) return;
	rmSync(release, { force: true });
	rmSync(goOn, { force: true });
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
			"- always: ask me",
			"",
		].join("\n"),
	);
	model.setScript({
		rules: [
			// The supervisor model (run on this machine by the link): it replies once the person has answered.
			{
				match: "What module name, FIRST?",
				steps: [{ waitForFile: release, then: { text: '{"decision":"answer","answer":"supervisor-name"}' } }],
			},
			{ match: "SSH-RULE", steps: [ask("Should I continue with the refactor?"), { text: "Refactored." }] },
			{ match: "POOL-NAME", steps: [ask("Which colour for the button?"), { text: "Coloured." }] },
			{ match: "POOL-MEMBER", steps: [ask("Which size for the cache?"), { text: "Sized." }] },
			{ match: "NEVER-TASK", steps: [ask("Should I delete the build directory?"), { text: "Kept." }] },
			{
				match: "FIRST-TASK",
				steps: [ask("What module name, FIRST?"), { waitForFile: goOn, then: { text: "Named." } }],
			},
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
	rmSync(release, { force: true });
	rmSync(goOn, { force: true });
	rmSync(agentDir, { recursive: true, force: true });
	await receiver?.close();
	if (missing) return;
	await fixture?.cleanup();
});

const answers = async (row: BoardRow) =>
	(await readTranscript(row.sessionFile)).filter((entry) => entry.sent === "answer");
const supervisorEvents = (row: BoardRow) =>
	readFileSync(join(row.runDir ?? "", "events.jsonl"), "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line) as Record<string, unknown>)
		.filter((event) => event.type === "supervisor");
const logOf = (row: BoardRow) => readSupervisorLog(board.storeDir).filter((line) => line.row === row.id);

describe("the supervisor decides a target row's questions in its link", { timeout: 300_000 }, () => {
	it("answers by rule on an ssh target and on a pool's member, `target is` matching the pool and the member", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const cases = [
			{ prompt: "SSH-RULE refactor", target: "h", answer: "yes, continue", line: 4, done: "Refactored." },
			{ prompt: "POOL-NAME button", target: "pool1", answer: "blue", line: 5, done: "Coloured." },
			{ prompt: "POOL-MEMBER cache", target: "pool1", answer: "large", line: 6, done: "Sized." },
		];
		for (const one of cases) {
			const dispatched = await board.dispatch({ prompt: one.prompt, cwd: repo, target: one.target });
			const row = await waitDone(board, dispatched.id, 120_000);
			expect(row.state, one.prompt).toBe("completed");
			// The far worker continued from the answer in place: the mirrored session has it, credited to the rule.
			expect(await answers(row)).toEqual([
				{ role: "user", text: one.answer, sent: "answer", by: `rule ${rulesFile}:${one.line}` },
			]);
			expect((await readTranscript(row.sessionFile)).at(-1)?.text).toBe(one.done);
			expect(logOf(row)).toMatchObject([
				{ decision: "answered", answer: one.answer, rule: `${rulesFile}:${one.line}` },
			]);
			expect(supervisorEvents(row)).toMatchObject([
				{ decision: "answered", text: `supervisor answered: ${one.answer} (${rulesFile}:${one.line})` },
			]);
			expect(row.supervisorNote).toBeUndefined();
			heard.push(["answered", row.id]);
		}
		// No rule left any of them to the person.
		expect(JSON.stringify(readSupervisorLog(board.storeDir))).not.toContain("asked-you");
		// The replay credits the supervisor, and the rules now answer the same (the pool's member included).
		const replayed = recordedQuestions(storePaths(board.storeDir), board.storeDir, 0);
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
		for (const where of [{ target: "h" }, {}]) {
			const dispatched = await board.dispatch({ prompt: "NEVER-TASK clean", cwd: repo, ...where });
			const waiting = await waitFor(
				async () => {
					const row = await board.get(dispatched.id);
					return row?.supervisorNote ? row : undefined;
				},
				"the supervisor's note on the row",
				120_000,
			);
			expect(waiting.state).toBe("needs_input");
			expect(waiting.supervisorNote).toMatch(/^asked you because: .*never answered for you/);
			heard.push(["needs-input", waiting.id]);
			expect(logOf(waiting)).toMatchObject([{ decision: "asked-you", rule: expect.stringMatching(/^never: /) }]);
			expect((await board.reply(waiting.id, "no, keep it", { receiptTimeoutMs: 30_000 })).delivery).toBe("answer");
			const row = await waitDone(board, waiting.id, 120_000);
			expect(row.state).toBe("completed");
			expect(await answers(row)).toEqual([{ role: "user", text: "no, keep it", sent: "answer" }]);
			expect(row.supervisorNote).toBeUndefined();
			await waitFor(
				() => logOf(row).some((line) => line.decision === "you-answered"),
				"the person's answer in supervisor.log",
				30_000,
			);
		}
	});

	it("a person who answers first wins: the supervisor's later answer is rejected", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const dispatched = await board.dispatch({ prompt: "FIRST-TASK name it", cwd: repo, target: "h" });
		// The supervisor model (on this machine) has the question and waits for the release.
		await model.waitForRequest(
			(request) => request.prompt.includes("What module name, FIRST?"),
			"the supervisor model's request",
			120_000,
		);
		const waiting = await waitFor(
			async () => {
				const row = await board.get(dispatched.id);
				return row?.state === "needs_input" ? row : undefined;
			},
			"the remote row to wait for the answer",
			60_000,
		);
		expect((await board.reply(waiting.id, "person-name", { receiptTimeoutMs: 30_000 })).delivery).toBe("answer");
		writeFileSync(release, "");
		await waitFor(
			() => logOf(waiting).some((line) => line.decision === "answered-first"),
			"the supervisor's rejected answer in supervisor.log",
			60_000,
		);
		writeFileSync(goOn, "");
		const row = await waitDone(board, waiting.id, 120_000);
		expect(row.state).toBe("completed");
		expect(await answers(row)).toEqual([{ role: "user", text: "person-name", sent: "answer" }]);
		expect(logOf(row)).toMatchObject([
			{ decision: "answered-first", answer: "supervisor-name", rule: `${rulesFile}:8` },
		]);
		expect(supervisorEvents(row)).toMatchObject([{ decision: "answered-first" }]);
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
		expect(got.map((body) => [body.event, body.row])).toEqual(heard);
		expect(got[0]?.text).toBe(`"Should I continue with the refactor?" -> "yes, continue" by rule ${rulesFile}:4`);
	});
});
