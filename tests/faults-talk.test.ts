/**
 * Fault battery, round two (issue #20), the control channel and the queue, end to end with the real
 * runner, the real pi and the scripted model: text that quotes the prompt placeholder (case 3), a
 * reply to a queued row that is stopped before it starts (case 4), a symlinked session file and
 * loose row directories (case 2), torn, wrong-typed and hostile queue entries and run.json (case 8).
 */
import {
	chmodSync,
	copyFileSync,
	existsSync,
	linkSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inboxNames } from "../runner/life/inbox.mjs";
import { PROMPT_PLACEHOLDER } from "../runner/protocol.mjs";
import { queuedEntryName } from "../runner/life/queue.mjs";
import { storePaths } from "../src/board/engine/paths.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { writeRow } from "../test-support/hardening-fixtures.ts";
import {
	createTestAgent,
	PI_CLI,
	REPO_ROOT,
	runPi,
	userTexts,
	waitFor,
	type TestAgent,
} from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

function agentWith(options: Parameters<typeof createTestAgent>[0]): TestAgent {
	const agent = createTestAgent(options);
	agents.push(agent);
	return agent;
}

const userTextsOf = (agent: TestAgent) => agent.calls().flatMap((call) => userTexts(call));

describe("fault battery: the control channel", () => {
	it("case 3: a prompt, steer and resume that quote the placeholder reach the model whole; a worker without the role still fails loudly", async () => {
		const agent = agentWith({});
		const release = join(agent.root, "release-quote");
		agent.writeScript({
			rules: [
				{ match: "QUOTE-STEER", steps: [{ text: "Steer read." }] },
				{ match: "QUOTE-RESUME", steps: [{ text: "Resume read." }] },
				{ match: "QUOTE-DISPATCH", steps: [{ waitForFile: release, then: { text: "Dispatch read." } }] },
			],
			fallback: [{ text: "ok" }],
		});
		const board = boardFor(agent);
		// A pi whose worker role is missing (the wrapper drops our -e): the placeholder must not reach a model silently.
		const noRole = boardFor(agent, {
			piCommand: ["sh", join(REPO_ROOT, "test-support/drop-extension.sh"), process.execPath, PI_CLI],
		});
		const prompt = `QUOTE-DISPATCH the engine doc says: "${PROMPT_PLACEHOLDER}" and that is all.`;
		const exact = PROMPT_PLACEHOLDER;
		const [row, bare, stray] = [
			await board.dispatch({ prompt, cwd: agent.cwd }),
			await board.dispatch({ prompt: exact, cwd: agent.cwd }),
			await noRole.dispatch({ prompt: "QUOTE-NOROLE never for a model", cwd: agent.cwd }),
		];
		await waitFor(
			async () => (await board.get(row.id))?.live?.waitingSince,
			"the first run to wait for its model",
			30_000,
		);
		const steerText = `QUOTE-STEER again: ${PROMPT_PLACEHOLDER}`;
		const steered = await board.reply(row.id, steerText);
		expect(steered.delivery).toBe("steer");
		writeFileSync(release, "");
		const first = await waitDone(board, row.id);
		expect(first.state, first.error).toBe("completed");
		expect(first.latestAssistant).toBe("Steer read.");
		const resumeText = `QUOTE-RESUME ${PROMPT_PLACEHOLDER}`;
		expect((await board.reply(row.id, resumeText)).delivery).toBe("new-run");
		const resumed = await waitDone(board, row.id);
		expect(resumed.state, resumed.error).toBe("completed");
		expect(resumed.latestAssistant).toBe("Resume read.");
		const exactDone = await waitDone(board, bare.id);
		expect(exactDone.state, exactDone.error).toBe("completed");

		const texts = userTextsOf(agent);
		for (const text of [prompt, steerText, resumeText, exact]) expect(texts).toContain(text);

		const strayDone = await waitDone(noRole, stray.id);
		expect(strayDone.state).toBe("failed");
		expect(strayDone.error).toBe(
			"the worker did not load the agent-board extension, so the prompt could not be delivered",
		);
		expect(texts.some((text) => text.includes("QUOTE-NOROLE"))).toBe(false);
	}, 120_000);
});

describe("fault battery: the queue", () => {
	it("case 4 and 8: a reply to a queued row stopped before it starts gets its receipt; torn, wrong-typed and hostile queue entries and run.json are refused with the file and field", async () => {
		const agent = agentWith({});
		const release = join(agent.root, "release-holder");
		agent.writeScript({
			rules: [{ match: "HOLDER", steps: [{ waitForFile: release, then: { text: "Holder done." } }] }],
			fallback: [{ text: "Queued run done." }],
		});
		const board = boardFor(agent, { maxConcurrent: 1 });
		const holder = await board.dispatch({ prompt: "HOLDER keeps the only slot", cwd: agent.cwd });
		await waitFor(async () => (await board.get(holder.id))?.state === "working", "the holder to run", 30_000);
		const queued = async (prompt: string) => {
			const row = await board.dispatch({ prompt, cwd: agent.cwd });
			expect(row.state).toBe("queued");
			return row;
		};
		const [replied, torn, wrongType, hostile, badConfig] = [
			await queued("replied"),
			await queued("torn"),
			await queued("wrong type"),
			await queued("hostile"),
			await queued("bad config"),
		];
		const store = board.storeDir;
		const entryOf = (runId: string | undefined) =>
			join(store, "queue", queuedEntryName(store, runId ?? "") ?? "missing");

		// Case 4: the reply waits in the inbox; a stop before the run starts answers it, in the row.
		const reply = await board.reply(replied.id, "QUEUED-REPLY also update the changelog");
		expect(reply.delivery).toBe("queued");
		const stopped = await board.stop(replied.id);
		expect(stopped.state).toBe("stopped");
		expect(stopped.receipts).toEqual([
			expect.objectContaining({
				status: "rejected",
				code: "not-started",
				reason: "the run did not start: it was stopped while queued",
				preview: "QUEUED-REPLY also update the changelog",
			}),
		]);
		expect(stopped.recentEvents.map((event) => event.text)).toContain(
			"message rejected (the run did not start: it was stopped while queued): QUEUED-REPLY also update the changelog",
		);
		expect(inboxNames(stopped.runDir!)).toEqual([]);

		// Case 8: entries another process tore, mistyped or pointed elsewhere.
		const outside = join(agent.root, "outside-run");
		const marker = join(agent.root, "outside-ran");
		mkdirSync(outside);
		writeFileSync(join(outside, "run.json"), JSON.stringify({ piCommand: ["sh", "-c", `touch ${marker}`] }));
		const tornEntry = entryOf(torn.currentRunId);
		const wrongEntry = entryOf(wrongType.currentRunId);
		writeFileSync(tornEntry, '{"rowId":"');
		writeFileSync(wrongEntry, JSON.stringify({ rowId: 5, runId: wrongType.currentRunId, at: 1 }));
		const hostileEntry = entryOf(hostile.currentRunId);
		writeFileSync(
			hostileEntry,
			JSON.stringify({ ...JSON.parse(readFileSync(hostileEntry, "utf8")), runDir: outside }),
		);
		const planted = join(store, "queue", `${String(Date.now()).padStart(15, "0")}-run-planted.json`);
		writeFileSync(planted, JSON.stringify({ rowId: "ghost", runId: "run-planted", runDir: outside, at: Date.now() }));
		const configPath = join(badConfig.runDir!, "run.json");
		writeFileSync(configPath, JSON.stringify({ ...JSON.parse(readFileSync(configPath, "utf8")), piCommand: "node" }));

		// A fresh pi lists the board (and so pumps the queue) while the holder still has the slot.
		const list = await runPi(agent, { args: ["-p", "/agent-board list"], env: { AGENT_BOARD_DIR: store } });
		expect(list.code, list.stderr).toBe(0);
		expect(list.stdout).toMatch(new RegExp(`^${torn.id}\\s+failed\\s`, "m"));
		expect(list.stdout).toMatch(new RegExp(`^${wrongType.id}\\s+failed\\s`, "m"));
		expect((await board.get(torn.id))?.error).toMatch(
			new RegExp(`^queue entry ${escapeRegExp(tornEntry)} refused: unreadable \\(`),
		);
		expect((await board.get(wrongType.id))?.error).toBe(
			`queue entry ${wrongEntry} refused: /rowId must be an id (letters, digits, "-", "_")`,
		);
		for (const path of [tornEntry, wrongEntry, planted]) {
			expect(existsSync(path), path).toBe(false);
			expect(existsSync(`${path}.refused`), path).toBe(true);
		}

		writeFileSync(release, "");
		expect((await waitDone(board, holder.id)).state).toBe("completed");
		const hostileDone = await waitDone(board, hostile.id);
		expect(hostileDone.state, hostileDone.error).toBe("completed");
		const configDone = await waitDone(board, badConfig.id);
		expect(configDone.state).toBe("failed");
		expect(configDone.error).toBe(`${configPath}: /piCommand must be a non-empty array of strings`);
		// Nothing ever used the directory the entries pointed at.
		expect(readdirSync(outside)).toEqual(["run.json"]);
		expect(existsSync(marker)).toBe(false);
	}, 120_000);
});

function escapeRegExp(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("fault battery: the store's own files", () => {
	it("case 2: a session file that is a symlink or a hard link to a file outside is never written through; loose row and run directories are error rows", async () => {
		const agent = agentWith({ script: { rules: [], fallback: [{ text: "Done." }] } });
		const board = boardFor(agent);
		const [linked, hardLinked] = [
			await board.dispatch({ prompt: "symlinked later", cwd: agent.cwd }),
			await board.dispatch({ prompt: "hard linked later", cwd: agent.cwd }),
		];
		for (const row of [linked, hardLinked]) expect((await waitDone(board, row.id)).state).toBe("completed");
		const outside = [join(agent.root, "outside-symlink.jsonl"), join(agent.root, "outside-hardlink.jsonl")];
		copyFileSync(linked.sessionFile, outside[0]!);
		rmSync(linked.sessionFile);
		symlinkSync(outside[0]!, linked.sessionFile);
		renameSync(hardLinked.sessionFile, outside[1]!);
		linkSync(outside[1]!, hardLinked.sessionFile);
		for (const path of outside) chmodSync(path, 0o644);
		const before = outside.map((path) => ({ bytes: readFileSync(path, "utf8"), mode: statSync(path).mode & 0o777 }));

		for (const row of [linked, hardLinked])
			expect((await board.reply(row.id, "one more thing")).delivery).toBe("new-run");
		const [symlinkRun, hardlinkRun] = [await waitDone(board, linked.id), await waitDone(board, hardLinked.id)];
		expect(symlinkRun.state).toBe("failed");
		expect(symlinkRun.error).toBe(`refusing session file ${linked.sessionFile}: is a symbolic link (not followed)`);
		expect(hardlinkRun.state).toBe("failed");
		expect(hardlinkRun.error).toBe(
			`refusing session file ${hardLinked.sessionFile}: has 2 hard links (another name for a file elsewhere)`,
		);
		expect(outside.map((path) => ({ bytes: readFileSync(path, "utf8"), mode: statSync(path).mode & 0o777 }))).toEqual(
			before,
		);

		// Row and run directories others can write are refused like the store's top-level ones.
		const paths = storePaths(board.storeDir);
		const looseRow = writeRow(paths, "loose-row");
		const looseRun = writeRow(paths, "loose-run");
		chmodSync(paths.row(looseRow.id), 0o777);
		chmodSync(looseRun.runDir, 0o777);
		const list = await runPi(agent, {
			args: ["-p", "/agent-board show loose-row"],
			env: { AGENT_BOARD_DIR: board.storeDir },
		});
		const runList = await runPi(agent, {
			args: ["-p", "/agent-board show loose-run"],
			env: { AGENT_BOARD_DIR: board.storeDir },
		});
		expect(list.stdout).toContain(
			`error:     row directory: refusing ${paths.row(looseRow.id)}: writable by group or others (mode 0777); run: chmod 700 ${paths.row(looseRow.id)}`,
		);
		expect(runList.stdout).toContain(
			`error:     run directory: refusing ${looseRun.runDir}: writable by group or others (mode 0777); run: chmod 700 ${looseRun.runDir}`,
		);
	}, 120_000);
});
