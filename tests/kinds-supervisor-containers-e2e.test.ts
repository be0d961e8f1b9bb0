import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { updatePolicy } from "../runner/life/policy.mjs";
import { storePaths } from "../src/board/engine/paths.ts";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow, TargetInput } from "../src/board/engine/types.ts";
import { recordedQuestions, ruleNow } from "../src/board/subcommands/replay.ts";
import { parseSupervisorCommand, runSupervisorCommand } from "../src/board/subcommands/supervisor-command.ts";
import { initRepo } from "../test-support/git-repo.ts";
import {
	LOOPBACK_MODEL,
	LOOPBACK_PROVIDER,
	startModelServer,
	writeAgentDir,
	type ModelServer,
} from "../test-support/model-server.ts";
import { PI_CLI } from "../test-support/pi-harness.ts";
import { remoteEngineMissing, startRemotePodman, type RemoteEngine } from "../test-support/remote-engine.ts";
import { podmanMissing, requires, sshdMissing } from "../test-support/requires.ts";
import {
	attachOpensLocalCopy,
	leftToThePerson,
	modelDecides,
	personAnswersFirst,
	removeContainersOfStore,
	ruleAnswersInPlace,
	supervisorCellRules,
	targetRuleAsksYou,
} from "../test-support/target-helpers.ts";
import { ensureWorkerImage } from "../test-support/worker-image.ts";

const localMissing = podmanMissing();
const remoteMissing = sshdMissing() ?? localMissing ?? remoteEngineMissing();
const agentDirBefore = process.env.PI_CODING_AGENT_DIR;
let model: ModelServer | undefined;
let root: string;
let repo: string;
/** This machine's pi home: the user's rules.md and the supervisor model's settings. */
let agentDir: string;
let rulesFile: string;

/** The two places, by their targets' names. */
const KINDS = ["box", "far"] as const;

beforeAll(async () => {
	if (localMissing && remoteMissing) return;
	model = await startModelServer();
	root = mkdtempSync(join(tmpdir(), "pab-ctr-sup-"));
	agentDir = writeAgentDir(model, join(root, "agent"));
	process.env.PI_CODING_AGENT_DIR = agentDir;
	rulesFile = join(agentDir, "agent-board", "rules.md");
	mkdirSync(join(agentDir, "agent-board"), { recursive: true });
	writeFileSync(
		rulesFile,
		[
			"# Rules",
			"",
			"## Rules",
			// Were `target is` not checked, every row would get this one.
			'- when target is nowhere and question says "continue": answer "wrong target"',
			'- when target is box and question says "continue": answer "yes, on box"',
			'- when target is far and question says "continue": answer "yes, on far"',
			'- when question says "delete": answer "yes"',
			'- when target is box and question says "port": ask me',
			'- when target is far and question says "port": ask me',
			"",
		].join("\n"),
	);
	repo = initRepo(join(root, "repo"), { "readme.txt": "hello\n" });
	model.setScript({
		rules: KINDS.flatMap((kind) => supervisorCellRules(kind, root)),
		fallback: [{ text: "ok" }],
	});
}, 120_000);

afterAll(async () => {
	process.env.PI_CODING_AGENT_DIR = agentDirBefore;
	await model?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

/** A board of its own whose one target is `name`, the supervisor model set in its policy. */
async function boardWith(name: string, target: TargetInput): Promise<BoardEngine> {
	const board = createBoardService({
		storeDir: join(root, `store-${name}`),
		piCommand: [process.execPath, PI_CLI],
		env: { ...process.env },
	});
	await board.targets.add(name, target);
	await updatePolicy(board.storeDir, (policy) => {
		policy.supervisor = { model: `${LOOPBACK_PROVIDER}/${LOOPBACK_MODEL}` };
	});
	return board;
}

const requireModel = (): ModelServer => {
	if (!model) throw new Error("the scripted model did not start");
	return model;
};

/** The first line of a session file: its header. */
const headerOf = (file: string) =>
	JSON.parse(readFileSync(file, "utf8").split("\n")[0] ?? "") as { type?: string; cwd?: string };

/** The cells of one place: its board is made by the place's beforeAll. */
function cells(kind: (typeof KINDS)[number], what: string, missing: string | undefined, board: () => BoardEngine) {
	const need = (ctx: TestContext) => requires(ctx, what, missing);
	const line = kind === "box" ? 5 : 6;
	const answer = `yes, on ${kind}`;
	/** The rule cell's finished row: the replay and attach cells read it (no run of their own). */
	let ruleRow: BoardRow | undefined;
	const finishedRuleRow = () => {
		if (!ruleRow) throw new Error(`the rule cell's row on ${kind} did not complete; this cell reads it`);
		return ruleRow;
	};

	it(`a \`target is ${kind}\` rule answers in place: the row completes from it, credited to the rule`, async (ctx) => {
		need(ctx);
		ruleRow = await ruleAnswersInPlace(board(), {
			tag: kind,
			target: kind,
			repo,
			answer,
			rule: `${rulesFile}:${line}`,
		});
	});

	it(`the replay shows the \`target is ${kind}\` rule answering that question, and the rules now answer the same`, async (ctx) => {
		need(ctx);
		const row = finishedRuleRow();
		const question = `Should I continue on ${kind}?`;
		const recorded = recordedQuestions(storePaths(board().storeDir), board().storeDir, 0).filter(
			(one) => one.meta.id === row.id,
		);
		expect(recorded).toMatchObject([
			{ question, outcome: { kind: "answered", text: answer, by: "supervisor", rule: `${rulesFile}:${line}` } },
		]);
		// The rules as they are now, given the row's place: the `target is ${kind}` rule, not another place's.
		expect(ruleNow(recorded[0]!, agentDir, new Map())).toEqual({
			text: `answer "${answer}" (${rulesFile}:${line})`,
			answer,
		});
		// What `/agent-board supervisor replay` prints (its table cuts a long rules path: only its start is read).
		const parsed = parseSupervisorCommand("replay --since 1h");
		if (!parsed.ok) throw new Error(parsed.error);
		const table = await runSupervisorCommand(board(), parsed, repo, agentDir, async () => row);
		const mine = table.split("\n").filter((text) => text.includes(question));
		expect(mine).toHaveLength(1);
		expect(mine[0]).toMatch(new RegExp(`=\\s+answer "${answer}" \\(.*\\s+supervisor: "${answer}" \\(`));
	});

	it("attach to the finished row opens a local copy of its session whose cwd is the row's local worktree", async (ctx) => {
		need(ctx);
		const row = (await board().get(finishedRuleRow().id)) ?? finishedRuleRow();
		const { copied } = await attachOpensLocalCopy(board(), row, {
			tag: kind,
			from: join(root, `from-${kind}.jsonl`),
			cwd: root,
			agentDir,
			ended: `Continued on ${kind}.`,
		});
		// The mirrored session names the container's directory: opening it as is would move pi there.
		const mirrored = headerOf(row.sessionFile).cwd;
		expect(mirrored).not.toBe(row.worktreePath);
		expect(copied).not.toContain(JSON.stringify(mirrored));
	});

	it(`a \`target is ${kind}\` rule that asks you leaves the question to the person, its note naming that rule`, async (ctx) => {
		need(ctx);
		await targetRuleAsksYou(board(), {
			tag: kind,
			target: kind,
			repo,
			rule: `${rulesFile}:${kind === "box" ? 8 : 9}`,
		});
	});

	it("leaves a destructive question to the person, whatever a rule says, and the person's answer goes through", async (ctx) => {
		need(ctx);
		await leftToThePerson(board(), { tag: kind, target: kind, repo });
	});

	it("a question no rule covers is answered by the supervisor model, credited to it", async (ctx) => {
		need(ctx);
		await modelDecides(board(), requireModel(), { tag: kind, target: kind, repo });
	});

	it("a person who answers while the supervisor model decides wins: the model's later answer is rejected", async (ctx) => {
		need(ctx);
		await personAnswersFirst(board(), requireModel(), {
			tag: kind,
			target: kind,
			repo,
			holdDir: root,
			rule: "model",
		});
	});
}

describe("the supervisor on a container target on this machine's podman", { timeout: 300_000 }, () => {
	let board: BoardEngine;
	beforeAll(async () => {
		if (localMissing) return;
		const image = (await ensureWorkerImage()).tag;
		board = await boardWith("box", { kind: "container", engine: "podman", image, network: "host" });
	}, 300_000);
	afterAll(() => {
		if (board) removeContainersOfStore(board.storeDir);
	});
	cells("box", "podman", localMissing, () => board);
});

describe("the supervisor on a container target on a remote engine", { timeout: 300_000 }, () => {
	let board: BoardEngine;
	let engine: RemoteEngine | undefined;
	beforeAll(async () => {
		if (remoteMissing) return;
		engine = await startRemotePodman();
		board = await boardWith("far", {
			kind: "container",
			engine: "podman",
			image: engine.image,
			engineHost: engine.url,
			engineIdentity: engine.identity,
			network: "host",
		});
		// The station is made and our files copied in (a row's start would make it too, slower to read).
		expect((await board.targets.check("far")).items.filter((item) => !item.ok)).toEqual([]);
	}, 300_000);
	afterAll(async () => {
		await engine?.cleanup();
	});
	cells("far", "sshd, podman and uidmap", remoteMissing, () => board);
});
