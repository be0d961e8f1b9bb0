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
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager, type ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { updatePolicy } from "../runner/life/policy.mjs";
import { REQUEST_MARKER } from "../runner/supervisor/supervisor-model.mjs";
import { readSupervisorLog } from "../runner/supervisor/supervisor-log.mjs";
import { storePaths } from "../src/board/engine/paths.ts";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { attachTo, loadAttach } from "../src/board/presence/attach.ts";
import { runNotify } from "../src/board/subcommands/notify-command.ts";
import { recordedQuestions, ruleNow } from "../src/board/subcommands/replay.ts";
import { readTranscript } from "../src/board/view-model/transcript.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import type { FauxStep } from "../test-support/faux-script.ts";
import { LOOPBACK_MODEL, LOOPBACK_PROVIDER, writeAgentDir, type ModelServer } from "../test-support/model-server.ts";
import { PI_CLI, waitFor } from "../test-support/pi-harness.ts";
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
/** The rows the rule cell ran to their end, by target: what attach opens. */
const ran = new Map<string, string>();
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
			// The supervisor model for the `decide` rule's questions: only its request has the question as data.
			...["h", "pool1"].map((target) => ({
				match: `What module name on ${target}?`,
				steps: [{ text: `{"decision":"answer","answer":"${target}-module"}` }],
			})),
			// The supervisor model (run on this machine by the link): it replies once the person has answered.
			{
				match: "What module name, FIRST?",
				steps: [{ waitForFile: release, then: { text: '{"decision":"answer","answer":"supervisor-name"}' } }],
			},
			{ match: "SSH-RULE", steps: [ask("Should I continue with the refactor?"), { text: "Refactored." }] },
			{ match: "POOL-NAME", steps: [ask("Which colour for the button?"), { text: "Coloured." }] },
			{ match: "POOL-MEMBER", steps: [ask("Which size for the cache?"), { text: "Sized." }] },
			{ match: "NEVER-TASK", steps: [ask("Should I delete the build directory?"), { text: "Kept." }] },
			...["h", "pool1"].flatMap((target) => [
				{
					match: `MODEL-${target} `,
					steps: [ask(`What module name on ${target}?`), { text: `Named on ${target}.` }],
				},
				// What is said in an attached copy of a row's session: its next tool call shows where it runs.
				{
					match: `ATTACH-${target} `,
					steps: [{ toolCall: { name: "bash", args: { command: "pwd" } } }, { text: `Here on ${target}.` }],
				},
			]),
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

/** A destructive question on `where`: left to the person with its note, and the person's answer goes through. */
async function leftToPerson(target?: string): Promise<BoardRow> {
	const dispatched = await started("NEVER-TASK clean", target);
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
	expect((await readTranscript(row.sessionFile)).at(-1)?.text).toBe("Kept.");
	expect(row.supervisorNote).toBeUndefined();
	await waitFor(
		() => logOf(row).some((line) => line.decision === "you-answered"),
		"the person's answer in supervisor.log",
		30_000,
	);
	return row;
}

/** A question the `decide` rule (line 8) gives the supervisor model: its answer reaches the far worker, credited to it. */
async function modelDecides(target: string): Promise<BoardRow> {
	const question = `What module name on ${target}?`;
	const dispatched = await started(`MODEL-${target} split`, target);
	const row = await waitDone(board, dispatched.id, 120_000);
	expect(row.state).toBe("completed");
	// The model on this machine was asked, with the row's place and the question as data.
	const request = model
		.requests()
		.find((r) => r.prompt.startsWith(REQUEST_MARKER) && r.prompt.includes(`The question:\n${question}`));
	expect(request?.prompt).toContain(`(${row.id}), on ${target}`);
	// The far worker went on from the model's answer, and its mirrored session credits the model.
	expect(await answers(row)).toEqual([
		{ role: "user", text: `${target}-module`, sent: "answer", by: `model (${rulesFile}:8)` },
	]);
	expect((await readTranscript(row.sessionFile)).at(-1)?.text).toBe(`Named on ${target}.`);
	expect(logOf(row)).toMatchObject([
		{
			decision: "answered",
			answer: `${target}-module`,
			rule: `${rulesFile}:8`,
			model: `${LOOPBACK_PROVIDER}/${LOOPBACK_MODEL}`,
		},
	]);
	expect(supervisorEvents(row)).toMatchObject([{ decision: "answered" }]);
	expect(row.supervisorNote).toBeUndefined();
	heard.push(["answered", row.id]);
	return row;
}

/** A pi run to its end: `args` after pi's CLI, the prompt on stdin (never argv), in `cwd`. */
function runPiIn(
	cwd: string,
	args: string[],
	prompt: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
	return new Promise((resolve) => {
		const child = execFile(
			process.execPath,
			[PI_CLI, ...args],
			{ cwd, env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" }, timeout: 90_000 },
			(error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
		);
		child.stdin?.end(prompt);
	});
}

/**
 * Attach to a finished row that ran on the host, as the board's `o` does it (attachTo, pi's switchSession
 * the one thing stood in for): the record names a local copy of the row's session whose cwd is the row's
 * local worktree and whose entries are the far session's; a real pi opened on the copy (what switchSession
 * does) runs its next tool call in that worktree, and the row's own session is left as it was.
 */
async function attachesHere(target: string): Promise<void> {
	const row = await board.get(ran.get(target) ?? "");
	if (!row) throw new Error(`no row ran on ${target} in the rule cell`);
	expect(row.state).toBe("completed");
	expect(row.worktreePath).toBeTruthy();
	const worktree = row.worktreePath ?? "";
	// The far side's session, read on the host as its user: its header's cwd is the host's path.
	const far = await fixture?.host.ssh(`cat .agent-board/store/sessions/${row.id}/${row.id}.jsonl`);
	expect(far?.code, far?.stderr).toBe(0);
	const farLines = (far?.stdout ?? "").split("\n");
	const farCwd = (JSON.parse(farLines[0] ?? "{}") as { cwd?: string }).cwd ?? "";
	expect(farCwd).toContain(".agent-board/work/");
	const mirrored = readFileSync(row.sessionFile, "utf8");

	const switched: string[] = [];
	const notes: string[] = [];
	const mine = join(fixture?.local ?? "", "mine.jsonl");
	const ctx = {
		hasUI: true,
		ui: { notify: (text: string) => notes.push(text) },
		sessionManager: { getSessionFile: () => mine },
		switchSession: async (path: string) => {
			switched.push(path);
			return { cancelled: false };
		},
	} as unknown as ExtensionCommandContext;
	await attachTo(ctx, board, row, undefined);
	expect(notes).toEqual([]);
	expect(switched).toHaveLength(1);
	const copy = switched[0] ?? "";
	expect(copy).not.toBe(row.sessionFile);
	expect(await loadAttach(board.storeDir)).toMatchObject({ rowId: row.id, sessionFile: copy, from: mine });
	const copied = readFileSync(copy, "utf8");
	// The header's cwd is the local worktree (the far path stays only in what the far worker was told).
	expect(SessionManager.open(copy).getCwd()).toBe(worktree);
	expect(JSON.parse(copied.split("\n")[0] ?? "{}")).toEqual({ ...JSON.parse(farLines[0] ?? "{}"), cwd: worktree });
	// Everything after the header is the far session's, byte for byte (the question, the rule's answer, the end).
	expect(copied.split("\n").slice(1)).toEqual(farLines.slice(1));
	expect(copied).toContain(target === "h" ? "Refactored." : "Coloured.");

	// pi opened on the copy from elsewhere: the session's cwd is where it runs.
	const said = await runPiIn(fixture?.local ?? "", ["--session", copy], `ATTACH-${target} where are you`);
	expect(said.code, said.stderr).toBe(0);
	expect(said.stdout).toContain(`Here on ${target}.`);
	const results = SessionManager.open(copy)
		.getEntries()
		.flatMap((entry) =>
			entry.type === "message" && entry.message.role === "toolResult" && entry.message.toolName === "bash"
				? [entry.message.content.map((part) => (part.type === "text" ? part.text : "")).join("")]
				: [],
		);
	expect(results.map((text) => realpathSync(text.trim()))).toEqual([realpathSync(worktree)]);
	// What was said there stays in the copy: the row's session and the far one are as they were.
	expect(readFileSync(row.sessionFile, "utf8")).toBe(mirrored);
	expect(readFileSync(copy, "utf8").startsWith(copied)).toBe(true);
}

describe("the supervisor decides a target row's questions in its link", { timeout: 300_000 }, () => {
	it("answers by rule on an ssh target and on a pool's member, `target is` matching the pool and the member", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const cases = [
			{ prompt: "SSH-RULE refactor", target: "h", answer: "yes, continue", line: 4, done: "Refactored." },
			{ prompt: "POOL-NAME button", target: "pool1", answer: "blue", line: 5, done: "Coloured." },
			{ prompt: "POOL-MEMBER cache", target: "pool1", answer: "large", line: 6, done: "Sized." },
		];
		void started("NEVER-TASK clean", "pool1");
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
		for (const target of ["h", undefined]) await leftToPerson(target);
	});

	it("leaves a question outside the safe set to the person on a pool's member", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const row = await leftToPerson("pool1");
		expect(row.host).toBe("h");
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

	it("a question a `decide` rule gives the supervisor model is answered by it on an ssh target, credited to the model", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await modelDecides("h");
	});

	it("a question a `decide` rule gives the supervisor model is answered by it on a pool's member", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		expect((await modelDecides("pool1")).host).toBe("h");
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
