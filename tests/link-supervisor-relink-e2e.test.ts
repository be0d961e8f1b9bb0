/**
 * A target run's link that dies while its supervisor decides a question (killed, the machine restarted)
 * leaves that question to the new link, which decides it: the far side does not send the ask_user start
 * again, so the new link finds it in the local events (its start without its end, no supervisor.log line of
 * the call, no answer waiting in the inbox). A real sshd on 127.0.0.1 logs into a second Unix user whose pi
 * talks to the loopback scripted model; the supervisor's model is held until the first link is dead.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { updatePolicy } from "../runner/life/policy.mjs";
import { readSupervisorLog } from "../runner/supervisor/supervisor-log.mjs";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { readTranscript } from "../src/board/view-model/transcript.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { LOOPBACK_MODEL, LOOPBACK_PROVIDER, writeAgentDir, type ModelServer } from "../test-support/model-server.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import { requires, sshdMissing } from "../test-support/requires.ts";
import { startSshBoard, type SshBoard } from "../test-support/ssh-board.ts";

const missing = sshdMissing();
let fixture: SshBoard | undefined;
let board: BoardEngine;
let model: ModelServer;
let repo: string;
/** This machine's pi agent dir: the user's rules.md and the supervisor model's settings. */
const agentDir = join(tmpdir(), `pab-relink-sup-agent-${process.pid}`);
const rulesFile = join(agentDir, "agent-board", "rules.md");
/** What lets the supervisor model reply: written once the first link is dead and the new one has asked. */
const release = join(tmpdir(), `pab-relink-sup-release-${process.pid}`);
const QUESTION = "Which port should the RELINK server use?";

beforeAll(async () => {
	if (missing) return;
	rmSync(release, { force: true });
	fixture = await startSshBoard("pab-relink-sup-", { env: () => ({ PI_CODING_AGENT_DIR: agentDir }) });
	({ board, model, repo } = fixture);
	writeAgentDir(model, agentDir);
	mkdirSync(join(agentDir, "agent-board"), { recursive: true });
	writeFileSync(rulesFile, ["# Rules", "", '- when question says "port": decide', "- always: ask me", ""].join("\n"));
	model.setScript({
		rules: [
			{
				match: QUESTION,
				steps: [{ waitForFile: release, then: { text: '{"decision":"answer","answer":"port 8080"}' } }],
			},
			{
				match: "RELINK-TASK",
				steps: [{ toolCall: { name: "ask_user", args: { question: QUESTION } } }, { text: "Served." }],
			},
		],
		fallback: [{ text: "ok" }],
	});
	await updatePolicy(board.storeDir, (policy) => {
		policy.supervisor = { model: `${LOOPBACK_PROVIDER}/${LOOPBACK_MODEL}` };
	});
}, 180_000);

afterAll(async () => {
	rmSync(release, { force: true });
	rmSync(agentDir, { recursive: true, force: true });
	if (missing) return;
	await fixture?.cleanup();
});

/** The pid that owns the run here: its link (runner.json). */
const ownerOf = (row: BoardRow): number =>
	(JSON.parse(readFileSync(join(row.runDir ?? "", "runner.json"), "utf8")) as { pid: number }).pid;

const gone = (pid: number): boolean => {
	try {
		return readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
	} catch {
		return true;
	}
};

const supervisorAsks = () => model.requests().filter((request) => request.prompt.includes(QUESTION)).length;

describe("a target run's link that dies mid-decision", { timeout: 300_000 }, () => {
	it("leaves the question to the new link, whose supervisor decides it", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const dispatched = await board.dispatch({ prompt: "RELINK-TASK start the server", cwd: repo, target: "h" });
		// The first link's supervisor has the question and waits for its model.
		await waitFor(() => (supervisorAsks() >= 1 ? true : undefined), "the supervisor model's first request", 120_000);
		const asking = await waitFor(
			async () => {
				const row = await board.get(dispatched.id);
				return row?.state === "needs_input" ? row : undefined;
			},
			"the remote row to wait for the answer",
			60_000,
		);
		const link = ownerOf(asking);
		expect(readFileSync(`/proc/${link}/cmdline`, "utf8")).toContain("link");
		process.kill(link, "SIGKILL");
		await waitFor(() => (gone(link) ? true : undefined), "the link to die");
		// The next settle step starts a new link; its supervisor asks the model again.
		await waitFor(
			async () => {
				await board.supervise();
				return supervisorAsks() >= 2 ? true : undefined;
			},
			"the new link's supervisor to ask its model",
			120_000,
		);
		writeFileSync(release, "");
		const row = await waitDone(board, dispatched.id, 120_000);
		expect(row).toMatchObject({ state: "completed", latestAssistant: "Served." });
		expect(ownerOf(row)).not.toBe(link);
		const answers = (await readTranscript(row.sessionFile)).filter((entry) => entry.sent === "answer");
		expect(answers).toEqual([{ role: "user", text: "port 8080", sent: "answer", by: `model (${rulesFile}:3)` }]);
		const log = readSupervisorLog(board.storeDir).filter((line) => line.row === row.id);
		expect(log).toMatchObject([{ decision: "answered", answer: "port 8080", question: QUESTION }]);
	});
});
