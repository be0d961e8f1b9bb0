/** Shared by target tests: a link-like log of follow frames, a worktree's files, command-line scans, a store's containers, the attempts walk-through, the supervisor's cells. */
import { execFile, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { type ExtensionCommandContext, SessionManager } from "@earendil-works/pi-coding-agent";
import { expect } from "vitest";
import type { Frame } from "../runner/far/frames.mjs";
import { containerListArgs } from "../runner/kinds/container/container-argv.mjs";
import { REQUEST_MARKER } from "../runner/supervisor/supervisor-model.mjs";
import { readSupervisorLog } from "../runner/supervisor/supervisor-log.mjs";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { attachTo, clearAttach, loadAttach } from "../src/board/presence/attach.ts";
import { readTranscript } from "../src/board/view-model/transcript.ts";
import { waitDone } from "./board-helpers.ts";
import type { FauxRule, FauxStep } from "./faux-script.ts";
import { LOOPBACK_MODEL, LOOPBACK_PROVIDER, type ModelServer } from "./model-server.ts";
import { PI_CLI } from "./pi-harness.ts";
import { waitFor } from "./wait.ts";

export interface FollowLog {
	frames: Frame[];
	/** The session file as the link's mirror would hold it. */
	session: Buffer;
	end: Record<string, unknown> | undefined;
	git: { head: string; wip: string } | undefined;
	add(frame: Frame): void;
	seqs(): number[];
	eventLines(): string[];
	lastSeq(): number;
}

/** Collects follow frames across reconnects, applying session chunks at their offsets. */
export function followLog(): FollowLog {
	const frames: Frame[] = [];
	const events = (): Extract<Frame, { t: "event" }>[] =>
		frames.filter((f): f is Extract<Frame, { t: "event" }> => f.t === "event");
	const log: FollowLog = {
		frames,
		session: Buffer.alloc(0),
		end: undefined,
		git: undefined,
		add(frame) {
			frames.push(frame);
			if (frame.t === "session") {
				const bytes = Buffer.from(frame.data, "base64");
				log.session = frame.reset ? bytes : Buffer.concat([log.session.subarray(0, frame.offset), bytes]);
			}
			if (frame.t === "end") log.end = frame.status;
			if (frame.t === "git") log.git = { head: frame.head, wip: frame.wip };
		},
		seqs: () => events().map((f) => f.seq),
		eventLines: () => events().map((f) => f.line),
		lastSeq: () => Math.max(0, ...events().map((f) => f.seq)),
	};
	return log;
}

/** Every file under `dir` except .git: relative path -> executable bit + bytes. */
export function farTree(dir: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (path: string): void => {
		for (const name of readdirSync(path)) {
			if (path === dir && name === ".git") continue;
			const full = join(path, name);
			const stat = statSync(full);
			if (stat.isDirectory()) walk(full);
			else out[relative(dir, full)] = `${(stat.mode & 0o111) !== 0 ? "x" : "-"} ${readFileSync(full, "base64")}`;
		}
	};
	walk(dir);
	return out;
}

/** Live processes (any user) whose command line contains `needle`, this process excluded. */
export function procsMentioning(needle: string): { pid: number; argv: string[] }[] {
	const out: { pid: number; argv: string[] }[] = [];
	for (const name of readdirSync("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
		try {
			const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
			const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
			if (cmdline.includes(needle) && state !== "Z") out.push({ pid, argv: cmdline.split("\0").filter(Boolean) });
		} catch {
			// Exited while we looked.
		}
	}
	return out;
}

/**
 * The attempts walk-through every target kind runs: three attempts on `target` each rewrite shared.txt
 * and write a file of their own; compare and its diff run here, and the third attempt is merged.
 * `whileRunning` gets the rows before any is awaited (the container test sees one container per attempt).
 */
/** The local podman's containers, running or not, that a board with this store made (by their store label). */
export function containersOfStore(store: string): string[] {
	return spawnSync("podman", containerListArgs("podman", undefined, store), { encoding: "utf8" })
		.stdout.split("\n")
		.filter(Boolean);
}

/** A fixture's teardown: removes whatever containers its store left. */
export function removeContainersOfStore(store: string): void {
	const left = containersOfStore(store);
	if (left.length) spawnSync("podman", ["rm", "-f", ...left], { stdio: "ignore" });
}

export async function threeAttemptsMergeOne(
	board: BoardEngine,
	model: ModelServer,
	options: { tag: string; target: string; repo: string; whileRunning?: (rows: BoardRow[]) => Promise<void> },
): Promise<void> {
	const { tag, target, repo } = options;
	model.setScript({
		rules: [
			{
				match: tag,
				steps: [
					{
						toolCall: {
							name: "bash",
							args: {
								command: `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt && echo mine > "own-$AGENT_BOARD_ROW.txt"`,
							},
						},
					},
					{ text: "Wrote my attempt." },
				],
			},
		],
	});
	const rows = await board.dispatchAttempts({ prompt: `${tag} rewrite shared.txt`, cwd: repo, target, count: 3 });
	expect(rows.map((r) => r.target)).toEqual([target, target, target]);
	await options.whileRunning?.(rows);
	for (const row of rows)
		expect(await waitDone(board, row.id, 120_000)).toMatchObject({ state: "completed", error: undefined });
	const set = await board.compare(rows[1]?.id ?? "");
	expect(set.rows.map((entry) => entry.files)).toEqual(rows.map((row) => [`own-${row.id}.txt`, "shared.txt"]));
	const diff = (await board.compareDiff(rows[0]?.id ?? "", rows[1]?.id ?? "")).join("\n");
	expect(diff).toContain(`+attempt ${rows[1]?.id}`);
	expect((await board.merge(rows[2]?.id ?? "", { commit: true })).status).toBe("merged");
	expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe(`attempt ${rows[2]?.id}\n`);
}

/*
 * The supervisor's cells, shared by every kind's supervisor test (kinds-supervisor-e2e for ssh and pool
 * members, kinds-supervisor-containers-e2e for both container places). Each cell is one row on `target`
 * whose prompt, question and replies are made from `tag`, so the cells of several places share one
 * scripted model: put `supervisorCellRules(tag, holdDir)` in its script. The rules file is the caller's:
 * a rule cell needs a `question says "continue"` rule that answers for `target`; nothing else of it may
 * answer "module name" or "delete" questions (delete is never answered for you, whatever a rule says).
 */

const askUser = (question: string): FauxStep => ({ toolCall: { name: "ask_user", args: { question } } });

/** What the person-first cell holds on: the supervisor model's reply, and the worker's turn after the answer. */
function firstFiles(tag: string, holdDir: string): { release: string; goOn: string } {
	return { release: join(holdDir, `first-release-${tag}`), goOn: join(holdDir, `first-go-on-${tag}`) };
}

/** The scripted model's rules for the supervisor cells of `tag`: the supervisor model's requests first. */
export function supervisorCellRules(tag: string, holdDir: string): FauxRule[] {
	return [...supervisorModelRules(tag, holdDir), ...workerRules(tag, holdDir)];
}

/**
 * The rules for the cells of several tags on one board: every tag's supervisor-model rules before any
 * worker's, since a supervisor request lists the board's other rows by name (another tag's `NEVER-…` row
 * there would otherwise be taken for that worker's prompt).
 */
export function supervisorCellRulesOf(tags: string[], holdDir: string): FauxRule[] {
	return [
		...tags.flatMap((tag) => supervisorModelRules(tag, holdDir)),
		...tags.flatMap((tag) => workerRules(tag, holdDir)),
	];
}

/** The supervisor model (the link runs it on this machine): only its request has the question as data. */
function supervisorModelRules(tag: string, holdDir: string): FauxRule[] {
	const { release } = firstFiles(tag, holdDir);
	return [
		{ match: `What module name on ${tag}?`, steps: [{ text: `{"decision":"answer","answer":"${tag}-module"}` }] },
		{
			match: `What module name first on ${tag}?`,
			steps: [{ waitForFile: release, then: { text: '{"decision":"answer","answer":"supervisor-name"}' } }],
		},
	];
}

/** The workers of `tag`'s cells, by their prompts. */
function workerRules(tag: string, holdDir: string): FauxRule[] {
	const { goOn } = firstFiles(tag, holdDir);
	return [
		{ match: `RULE-${tag}`, steps: [askUser(`Should I continue on ${tag}?`), { text: `Continued on ${tag}.` }] },
		{
			match: `NEVER-${tag}`,
			steps: [askUser(`Should I delete the build directory on ${tag}?`), { text: `Kept on ${tag}.` }],
		},
		{ match: `MODEL-${tag}`, steps: [askUser(`What module name on ${tag}?`), { text: `Named on ${tag}.` }] },
		{ match: `PORT-${tag}`, steps: [askUser(`Which port on ${tag}?`), { text: `Ported on ${tag}.` }] },
		{
			match: `FIRST-${tag}`,
			steps: [
				askUser(`What module name first on ${tag}?`),
				{ waitForFile: goOn, then: { text: `Named first on ${tag}.` } },
			],
		},
		// A pi the person opens on an attached copy of a row's session: its tool call shows where it runs.
		{
			match: `ATTACH-${tag} `,
			steps: [{ toolCall: { name: "bash", args: { command: "pwd" } } }, { text: `Here on ${tag}.` }],
		},
	];
}

/**
 * How a cell's row is dispatched: `start(prompt)` when given (a file that dispatches its rows early, so
 * that they overlap an earlier cell's, hands back the row it started for that prompt), else here and now.
 */
function dispatchFor(
	board: BoardEngine,
	options: { repo: string; target?: string; start?: (prompt: string) => Promise<BoardRow> },
): (prompt: string) => Promise<BoardRow> {
	const { repo, target, start } = options;
	return start ?? ((prompt) => board.dispatch({ prompt, cwd: repo, ...(target ? { target } : {}) }));
}

/** The answers in a row's session (its mirror, for a row that ran elsewhere), with who gave them. */
export async function answersOf(row: BoardRow): Promise<Awaited<ReturnType<typeof readTranscript>>> {
	return (await readTranscript(row.sessionFile)).filter((entry) => entry.sent === "answer");
}

/** The supervisor's events of a row's run (events.jsonl). */
export function supervisorEventsOf(row: BoardRow): Record<string, unknown>[] {
	return readFileSync(join(row.runDir ?? "", "events.jsonl"), "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line) as Record<string, unknown>)
		.filter((event) => event.type === "supervisor");
}

/** The row's lines of the board's supervisor.log. */
export function supervisorLogOf(board: BoardEngine, row: BoardRow): ReturnType<typeof readSupervisorLog> {
	return readSupervisorLog(board.storeDir).filter((line) => line.row === row.id);
}

/**
 * Rule answer: a rule's answer (`answer`, from the rules file's line `rule`, "<file>:<line>") reaches the
 * worker on `target` in place; the row completes from it, credited to the rule in its session, in
 * supervisor.log and in its events, with no note. Returns the finished row (replay and attach read it).
 */
export async function ruleAnswersInPlace(
	board: BoardEngine,
	options: { tag: string; target: string; repo: string; answer: string; rule: string; timeoutMs?: number },
): Promise<BoardRow> {
	const { tag, target, repo, answer, rule } = options;
	const dispatched = await board.dispatch({ prompt: `RULE-${tag} refactor`, cwd: repo, target });
	const row = await waitDone(board, dispatched.id, options.timeoutMs ?? 180_000);
	expect(row.state).toBe("completed");
	expect(await answersOf(row)).toEqual([{ role: "user", text: answer, sent: "answer", by: `rule ${rule}` }]);
	expect((await readTranscript(row.sessionFile)).at(-1)?.text).toBe(`Continued on ${tag}.`);
	expect(supervisorLogOf(board, row)).toMatchObject([{ decision: "answered", answer, rule }]);
	expect(supervisorEventsOf(row)).toMatchObject([
		{ decision: "answered", text: `supervisor answered: ${answer} (${rule})` },
	]);
	expect(row.supervisorNote).toBeUndefined();
	return row;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^$()|[\]{}\\]/g, "\\$&");

/** How a cell's escalated question shows: the row's prompt, the note's and the log's words, the worker's last text. */
interface Escalation {
	prompt: string;
	note: RegExp;
	rule: string | ReturnType<typeof expect.stringMatching>;
	last: string;
}

/** The row waits with "asked you because" and its log line; the person's answer goes through and the row completes. */
async function waitsForThePerson(
	board: BoardEngine,
	options: { repo: string; target?: string; start?: (prompt: string) => Promise<BoardRow>; timeoutMs?: number },
	escalation: Escalation,
): Promise<{ waiting: BoardRow; row: BoardRow }> {
	const timeoutMs = options.timeoutMs ?? 180_000;
	const dispatched = await dispatchFor(board, options)(escalation.prompt);
	const waiting = await waitFor(
		async () => {
			const row = await board.get(dispatched.id);
			return row?.supervisorNote ? row : undefined;
		},
		"the supervisor's note on the row",
		timeoutMs,
	);
	expect(waiting.state).toBe("needs_input");
	expect(waiting.supervisorNote).toMatch(escalation.note);
	expect(supervisorLogOf(board, waiting)).toMatchObject([{ decision: "asked-you", rule: escalation.rule }]);
	expect((await board.reply(waiting.id, "no, keep it", { receiptTimeoutMs: 30_000 })).delivery).toBe("answer");
	const row = await waitDone(board, waiting.id, timeoutMs);
	expect(row.state).toBe("completed");
	expect(await answersOf(row)).toEqual([{ role: "user", text: "no, keep it", sent: "answer" }]);
	expect((await readTranscript(row.sessionFile)).at(-1)?.text).toBe(escalation.last);
	expect(row.supervisorNote).toBeUndefined();
	await waitFor(
		() => supervisorLogOf(board, row).some((line) => line.decision === "you-answered"),
		"the person's answer in supervisor.log",
		30_000,
	);
	return { waiting, row };
}

/**
 * Never-class escalation: a destructive question is left to the person whatever a rule says, the row
 * waiting with "asked you because"; the person's answer goes through and the row completes from it.
 * No `target` runs it on this machine. Returns the waiting row (as the note showed) and the finished one.
 */
export function leftToThePerson(
	board: BoardEngine,
	options: {
		tag: string;
		target?: string;
		repo: string;
		start?: (prompt: string) => Promise<BoardRow>;
		timeoutMs?: number;
	},
): Promise<{ waiting: BoardRow; row: BoardRow }> {
	const { tag } = options;
	return waitsForThePerson(board, options, {
		prompt: `NEVER-${tag} clean`,
		note: /^asked you because: .*never answered for you/,
		rule: expect.stringMatching(/^never: /),
		last: `Kept on ${tag}.`,
	});
}

/**
 * `target is` escalation: a rule that asks you about the rows on `target` (`rule`, its "<file>:<line>",
 * `when target is <name> and question says "port": ask me`) leaves the row's question to the person with
 * the note naming that rule, where a later catch-all would name another line. Returns the finished row.
 */
export async function targetRuleAsksYou(
	board: BoardEngine,
	options: { tag: string; target: string; repo: string; rule: string; timeoutMs?: number },
): Promise<BoardRow> {
	const { tag, rule } = options;
	const { row } = await waitsForThePerson(board, options, {
		prompt: `PORT-${tag} serve`,
		note: new RegExp(`^asked you because: ${escapeRegExp(rule)} says ask me`),
		rule,
		last: `Ported on ${tag}.`,
	});
	return row;
}

/**
 * Model decision: a question no rule answers goes to the supervisor model on this machine, asked with the
 * row's place (`place`, the target's name unless given) and the question as data; its answer reaches the
 * worker, credited to the model (the log's rule is `rule`: the `decide` rule's "<file>:<line>" that sent it
 * there, "model" when none did; the session credits "model (<file>:<line>)" then). Returns the finished row.
 */
export async function modelDecides(
	board: BoardEngine,
	model: ModelServer,
	options: {
		tag: string;
		target: string;
		repo: string;
		place?: string;
		rule?: string;
		start?: (prompt: string) => Promise<BoardRow>;
		timeoutMs?: number;
	},
): Promise<BoardRow> {
	const { tag, target, rule } = options;
	const question = `What module name on ${tag}?`;
	const dispatched = await dispatchFor(board, options)(`MODEL-${tag} split`);
	const row = await waitDone(board, dispatched.id, options.timeoutMs ?? 180_000);
	expect(row.state).toBe("completed");
	const request = model
		.requests()
		.find((r) => r.prompt.startsWith(REQUEST_MARKER) && r.prompt.includes(`The question:\n${question}`));
	expect(request?.prompt).toContain(`(${row.id}), on ${options.place ?? target}`);
	// The worker went on from the model's answer, and its session credits the model.
	expect(await answersOf(row)).toEqual([
		{ role: "user", text: `${tag}-module`, sent: "answer", by: rule ? `model (${rule})` : "model" },
	]);
	expect((await readTranscript(row.sessionFile)).at(-1)?.text).toBe(`Named on ${tag}.`);
	expect(supervisorLogOf(board, row)).toMatchObject([
		{
			decision: "answered",
			rule: rule ?? "model",
			answer: `${tag}-module`,
			model: `${LOOPBACK_PROVIDER}/${LOOPBACK_MODEL}`,
		},
	]);
	expect(supervisorEventsOf(row)).toMatchObject([{ decision: "answered" }]);
	expect(row.supervisorNote).toBeUndefined();
	return row;
}

/**
 * Person first: while the supervisor model decides, the person answers; the supervisor's later answer is
 * rejected (`answered-first` in the log, with the rule that sent it to the model, "model" when none did) and
 * the worker continues from the person's. `holdDir` is the one given to supervisorCellRules.
 */
export async function personAnswersFirst(
	board: BoardEngine,
	model: ModelServer,
	options: { tag: string; target: string; repo: string; holdDir: string; rule: string; timeoutMs?: number },
): Promise<BoardRow> {
	const { tag, target, repo } = options;
	const timeoutMs = options.timeoutMs ?? 180_000;
	const question = `What module name first on ${tag}?`;
	const { release, goOn } = firstFiles(tag, options.holdDir);
	const dispatched = await board.dispatch({ prompt: `FIRST-${tag} name it`, cwd: repo, target });
	// The supervisor model (on this machine) has the question and waits for the release.
	await model.waitForRequest(
		(request) => request.prompt.startsWith(REQUEST_MARKER) && request.prompt.includes(question),
		"the supervisor model's request",
		timeoutMs,
	);
	const waiting = await waitFor(
		async () => {
			const row = await board.get(dispatched.id);
			return row?.state === "needs_input" ? row : undefined;
		},
		"the row to wait for the answer",
		60_000,
	);
	expect((await board.reply(waiting.id, "person-name", { receiptTimeoutMs: 30_000 })).delivery).toBe("answer");
	writeFileSync(release, "");
	await waitFor(
		() => supervisorLogOf(board, waiting).some((line) => line.decision === "answered-first"),
		"the supervisor's rejected answer in supervisor.log",
		60_000,
	);
	writeFileSync(goOn, "");
	const row = await waitDone(board, waiting.id, timeoutMs);
	expect(row.state).toBe("completed");
	expect(await answersOf(row)).toEqual([{ role: "user", text: "person-name", sent: "answer" }]);
	expect((await readTranscript(row.sessionFile)).at(-1)?.text).toBe(`Named first on ${tag}.`);
	expect(supervisorLogOf(board, row)).toMatchObject([
		{ decision: "answered-first", answer: "supervisor-name", rule: options.rule },
	]);
	expect(supervisorEventsOf(row)).toMatchObject([{ decision: "answered-first" }]);
	return row;
}

/** A pi run to its end on `session`: the prompt on stdin (never argv), in `cwd`, with `agentDir` as its home. */
export function runPiOnSession(
	session: string,
	options: { cwd: string; agentDir: string; prompt: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
	return new Promise((resolve) => {
		const child = execFile(
			process.execPath,
			[PI_CLI, "--session", session],
			{
				cwd: options.cwd,
				env: { ...process.env, PI_CODING_AGENT_DIR: options.agentDir, PI_OFFLINE: "1" },
				timeout: 90_000,
			},
			(error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
		);
		child.stdin?.end(options.prompt);
	});
}

/**
 * Attach as a real run, to a finished row of `tag` that ran elsewhere, as the board's `o` does it (attachTo,
 * pi's switchSession the one thing stood in for): the record names a local copy of the row's session (under
 * the store's attach/sessions) whose header's cwd is the row's local worktree and whose transcript is the
 * row's; a real pi opened on the copy from `cwd` (what switchSession does) runs its next tool call in that
 * worktree, and the row's own session is left as it was. `ended` is the row's last text. Returns the copy
 * and its text as attach made it (before pi ran on it), for the place's own checks.
 */
export async function attachOpensLocalCopy(
	board: BoardEngine,
	row: BoardRow,
	options: { tag: string; from: string; cwd: string; agentDir: string; ended: string },
): Promise<{ copy: string; copied: string }> {
	const { tag, from } = options;
	expect(row.state).toBe("completed");
	const worktree = row.worktreePath ?? "";
	expect(worktree, "the row's local worktree").not.toBe("");
	expect(statSync(worktree).isDirectory()).toBe(true);
	const mine = readFileSync(row.sessionFile);
	const switched: string[] = [];
	const notes: string[] = [];
	const ctx = {
		hasUI: true,
		ui: { notify: (text: string) => notes.push(text) },
		sessionManager: { getSessionFile: () => from },
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
	expect(copy.startsWith(join(board.storeDir, "attach", "sessions"))).toBe(true);
	// The record `b` and `/agent-board back` read: this row, its copy, the session we came from.
	expect(await loadAttach(board.storeDir)).toMatchObject({ rowId: row.id, sessionFile: copy, from });
	await clearAttach(board.storeDir);
	// The copy's header names the local worktree (pi reads it so), and the rest is the row's session.
	const copied = readFileSync(copy, "utf8");
	expect(JSON.parse(copied.split("\n")[0] ?? "")).toMatchObject({ type: "session", cwd: worktree });
	expect(SessionManager.open(copy).getCwd()).toBe(worktree);
	const transcript = await readTranscript(row.sessionFile);
	expect(await readTranscript(copy)).toEqual(transcript);
	expect(transcript.at(-1)?.text).toBe(options.ended);

	// A real pi opened on the copy from elsewhere: the session's cwd is where its tools run.
	const prompt = `ATTACH-${tag} where are we`;
	const pi = await runPiOnSession(copy, { cwd: options.cwd, agentDir: options.agentDir, prompt });
	expect(pi.code, pi.stderr).toBe(0);
	expect(pi.stdout).toContain(`Here on ${tag}.`);
	const said = (await readTranscript(copy)).slice(transcript.length);
	expect(said).toEqual([
		{ role: "user", text: prompt },
		{ role: "tool", text: expect.stringMatching(/^bash/) },
		{ role: "tool", text: expect.stringMatching(/^bash -> /) },
		{ role: "assistant", text: `Here on ${tag}.` },
	]);
	// pwd prints the physical path where the worktree's path goes through a symlink.
	expect(realpathSync((said[2]?.text ?? "").replace(/^bash -> /, "").trim())).toBe(realpathSync(worktree));
	// What was said in the copy stays there: the row's session is untouched.
	expect(readFileSync(row.sessionFile).equals(mine)).toBe(true);
	expect(readFileSync(copy, "utf8").startsWith(copied)).toBe(true);
	return { copy, copied };
}
