/**
 * Notifiers (issue #39): a row's question, its end and a supervisor's answer reach loopback receivers
 * in each format (json, ntfy, slack, discord: headers and bodies as the services document them), with
 * no board open (the store's keeper delivers the outbox); a receiver down for a while gets what it
 * missed, each event once, in order; the URL holds a secret and is never printed whole. A row paused at
 * its budget sends "budget" (not a question); a question a rule answers sends "answered" (with the
 * question, the answer and the rule) and no "needs-input"; one the supervisor leaves to the person does;
 * a failed row sends "failed" with its error.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { updatePolicy } from "../runner/life/policy.mjs";
import type { BoardRow } from "../src/board/engine/types.ts";
import { processStartTime } from "../runner/store/proc.mjs";
import { runNotify } from "../src/board/subcommands/notify-command.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import type { FauxStep } from "../test-support/faux-script.ts";
import { createTestAgent, runPi, type TestAgent, waitFor } from "../test-support/pi-harness.ts";
import { type Receiver, startReceiver } from "../test-support/receiver.ts";

const agents: TestAgent[] = [];
const receivers: Receiver[] = [];
afterAll(async () => {
	for (const agent of agents) agent.cleanup();
	for (const receiver of receivers) await receiver.close();
});

const ask = (question: string): FauxStep => ({ toolCall: { name: "ask_user", args: { question } } });

function statusOf(runDir: string): { state: string; endedAt?: number } | undefined {
	try {
		return JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as { state: string; endedAt?: number };
	} catch {
		return undefined;
	}
}

describe("notifiers: delivered with no board open", () => {
	it("a question and an end reach a receiver of each format; the secret URL is never printed whole", async () => {
		const receiver = await startReceiver();
		receivers.push(receiver);
		const agent = createTestAgent({});
		agents.push(agent);
		const store = join(agent.root, "store");
		agent.writeScript({
			rules: [
				{
					match: "NOTIFY-ASK",
					steps: [ask("Deploy to \u001b[31mproduction\u001b[0m now?\u0007"), { text: "Deployed as told." }],
				},
			],
		});
		const secret = "s3cr3t-t0pic";
		const env = { AGENT_BOARD_DIR: store };
		const added = await runPi(agent, {
			args: ["-p", `/agent-board notify add phone ${receiver.base}/ntfy/${secret} --format ntfy`],
			env,
		});
		expect(added.code, added.stderr).toBe(0);
		expect(added.stdout).toContain(`notifier phone added: ntfy to ${receiver.base}/***`);
		expect(added.stdout + added.stderr).not.toContain(secret);
		await runNotify(
			{ verb: "add", name: "hook", url: `${receiver.base}/json/${secret}`, on: "needs-input,completed" },
			store,
		);
		await runNotify(
			{ verb: "add", name: "team", url: `${receiver.base}/slack/T0/B0/${secret}`, format: "slack" },
			store,
		);
		await runNotify(
			{ verb: "add", name: "chat", url: `${receiver.base}/discord/1/${secret}`, format: "discord" },
			store,
		);
		const list = await runPi(agent, { args: ["-p", "/agent-board notify list"], env });
		expect(list.stdout).toMatch(
			/^phone {2}ntfy {2}http:\/\/127\.0\.0\.1:\d+\/\*\*\* {2}on needs-input,failed,completed,budget$/m,
		);
		expect(list.stdout).toMatch(/^hook {2}json {2}.* {2}on needs-input,completed$/m);
		expect(list.stdout).not.toContain(secret);
		expect(readFileSync(join(store, "notifiers.json")).length).toBeGreaterThan(0);
		expect(statSync(join(store, "notifiers.json")).mode & 0o777).toBe(0o600);

		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "NOTIFY-ASK deploy it", cwd: agent.cwd });
		const runDir = String(row.runDir);
		// Nothing of the board runs from here until the answer: the keeper delivers.
		await waitFor(() => receiver.delivered().length >= 4, "the question at all four receivers", 60_000);
		await board.reply(row.id, "yes");
		await waitFor(() => statusOf(runDir)?.endedAt, "the row to end", 60_000);
		await waitFor(() => receiver.delivered().length >= 8, "the end at all four receivers", 60_000);

		const [ntfyAsk, ntfyEnd] = receiver.delivered("/ntfy/");
		expect(ntfyAsk?.body).toBe("Deploy to [31mproduction[0m now?");
		expect(ntfyAsk?.headers).toMatchObject({
			title: "agent-board: NOTIFY-ASK deploy it needs input",
			tags: "question",
			priority: "4",
			"content-type": "text/plain; charset=utf-8",
		});
		expect(ntfyAsk?.headers.click).toBeUndefined();
		expect(ntfyEnd?.headers).toMatchObject({ tags: "white_check_mark", priority: "3" });

		const json = receiver.delivered("/json/").map((r) => JSON.parse(r.body) as Record<string, unknown>);
		expect(json.map((b) => b.event)).toEqual(["needs-input", "completed"]);
		expect(json[0]).toMatchObject({
			row: row.id,
			name: "NOTIFY-ASK deploy it",
			text: "Deploy to [31mproduction[0m now?",
			url: null,
		});
		expect(Object.keys(json[0] ?? {}).sort()).toEqual(["at", "event", "id", "name", "row", "text", "url"]);
		const keys = receiver.delivered("/json/").map((r) => r.headers["idempotency-key"]);
		expect(keys).toEqual(json.map((b) => b.id));
		expect(receiver.delivered("/json/").map((r) => r.headers["x-event-id"])).toEqual(keys);

		const slack = receiver.delivered("/slack/").map((r) => JSON.parse(r.body) as { text: string });
		expect(slack[0]?.text).toBe("agent-board: NOTIFY-ASK deploy it needs input\nDeploy to [31mproduction[0m now?");
		const discord = receiver.delivered("/discord/").map((r) => JSON.parse(r.body) as Record<string, unknown>);
		expect(discord[0]).toEqual({
			content: "agent-board: NOTIFY-ASK deploy it needs input\nDeploy to [31mproduction[0m now?",
			allowed_mentions: { parse: [] },
		});
		for (const r of receiver.got) expect(r.body).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
		// One message per question: the question's several status writes sent it once per receiver.
		expect(receiver.got.length).toBe(8);
		expect(readFileSync(join(store, "keeper.log"), "utf8")).not.toContain(secret);
	}, 180_000);

	it("a receiver down for a while gets every event it missed, each once, in order", async () => {
		const receiver = await startReceiver();
		receivers.push(receiver);
		receiver.down = true;
		const agent = createTestAgent({});
		agents.push(agent);
		const store = join(agent.root, "store");
		agent.writeScript({ rules: [], fallback: [{ text: "Done." }] });
		await runNotify({ verb: "add", name: "hook", url: `${receiver.base}/json`, on: "completed" }, store);
		// The web view "runs" (its record names a live process: this one): each message links its row there.
		mkdirSync(join(store, "web"), { mode: 0o700 });
		writeFileSync(
			join(store, "web", "server.json"),
			JSON.stringify({
				pid: process.pid,
				start: processStartTime(process.pid),
				host: "127.0.0.1",
				port: 4321,
				startedAt: Date.now(),
			}),
			{ mode: 0o600 },
		);
		const board = boardFor(agent, { maxConcurrent: 1 });
		const rows: BoardRow[] = [];
		for (let i = 0; i < 3; i++) rows.push(await board.dispatch({ prompt: `NOTIFY-DOWN row ${i}`, cwd: agent.cwd }));
		// Refused at least twice (a retry after the first wait), then the receiver comes back.
		await waitFor(() => receiver.got.length >= 2, "the receiver to refuse twice", 60_000);
		await waitFor(() => rows.every((r) => statusOf(String(r.runDir))?.endedAt), "the rows to end", 90_000);
		receiver.down = false;
		await waitFor(() => receiver.delivered().length >= 3, "what it missed", 120_000);
		await new Promise((r) => setTimeout(r, 2000));
		const delivered = receiver
			.delivered()
			.map((r) => JSON.parse(r.body) as { id: string; row: string; at: string; url: string });
		expect(delivered.map((b) => b.row)).toEqual(rows.map((r) => r.id));
		expect(delivered.map((b) => b.url)).toEqual(rows.map((r) => `http://127.0.0.1:4321/?row=${r.id}`));
		expect(new Set(delivered.map((b) => b.id)).size).toBe(3);
		const times = delivered.map((b) => Date.parse(b.at));
		expect([...times].sort((a, b) => a - b)).toEqual(times);
	}, 240_000);
});

describe("notifiers: a budget's pause, a failure and the supervisor's answers", () => {
	it("a row paused at its budget sends budget once, not a question; raised, it sends its end", async () => {
		const receiver = await startReceiver();
		receivers.push(receiver);
		const steps: FauxStep[] = [
			...Array.from(
				{ length: 8 },
				(_, i): FauxStep => ({
					text: `Step ${i + 1}: checking the next file before I run the command.`,
					toolCall: { name: "bash", args: { command: `echo step-${i + 1}` } },
				}),
			),
			{ text: "All steps done." },
		];
		const agent = createTestAgent({ script: { rules: [{ match: "BUDGETED", steps }] } });
		agents.push(agent);
		const store = join(agent.root, "store");
		await runNotify(
			{ verb: "add", name: "hook", url: `${receiver.base}/json`, on: "needs-input,budget,completed" },
			store,
		);
		// ntfy's default kinds include budget.
		await runNotify({ verb: "add", name: "phone", url: `${receiver.base}/ntfy/topic`, format: "ntfy" }, store);
		const board = boardFor(agent);
		const row = await board.dispatch({
			prompt: "BUDGETED walk the files",
			cwd: agent.cwd,
			model: "faux-stream/stream-1",
			budget: { tokens: 2000 },
		});
		await waitFor(() => receiver.delivered().length >= 2, "the budget's pause at both receivers", 90_000);
		const paused = await board.get(row.id);
		expect(paused?.budget?.paused).toBe(true);
		const [hook] = receiver.delivered("/json").map((r) => JSON.parse(r.body) as Record<string, unknown>);
		expect(hook).toMatchObject({
			event: "budget",
			row: row.id,
			name: "BUDGETED walk the files",
			text: "budget reached: 2k tokens; raise or stop",
		});
		const [ntfy] = receiver.delivered("/ntfy/");
		expect(ntfy?.body).toBe("budget reached: 2k tokens; raise or stop");
		expect(ntfy?.headers).toMatchObject({
			title: "agent-board: BUDGETED walk the files paused: budget reached",
			tags: "moneybag",
			priority: "4",
		});
		await board.reply(row.id, "raise to 1M");
		expect((await waitDone(board, row.id, 90_000)).state).toBe("completed");
		await waitFor(() => receiver.delivered().length >= 4, "the end at both receivers", 60_000);
		await new Promise((r) => setTimeout(r, 2000));
		// The budget's question was never a needs-input; its pause went once.
		const events = receiver.delivered("/json").map((r) => (JSON.parse(r.body) as { event: string }).event);
		expect(events).toEqual(["budget", "completed"]);
		expect(receiver.got.length).toBe(4);
	}, 240_000);

	it("a rule's answer sends answered (question, answer, rule) and no needs-input; a question left to the person sends needs-input", async () => {
		const receiver = await startReceiver();
		receivers.push(receiver);
		const agent = createTestAgent({
			script: {
				rules: [
					{
						match: "[agent-board supervisor request]",
						steps: [{ text: '{"decision":"ask","why":"it is your call"}' }],
					},
					{
						match: "ROUTINE",
						steps: [ask("Should I continue with the refactor?"), { text: "Refactor finished." }],
					},
					{ match: "ASK-WAIT", steps: [ask("Which region?")] },
				],
			},
		});
		agents.push(agent);
		const store = join(agent.root, "store");
		const rules = join(agent.agentDir, "agent-board", "rules.md");
		mkdirSync(join(agent.agentDir, "agent-board"), { recursive: true });
		writeFileSync(rules, '# Rules\n\n## Rules\n- when question says "continue": answer "yes, continue"\n');
		await updatePolicy(store, (policy) => (policy.supervisor = { model: "faux/faux-1" }));
		await runNotify({ verb: "add", name: "hook", url: `${receiver.base}/json`, on: "needs-input,answered" }, store);
		await runNotify(
			{ verb: "add", name: "phone", url: `${receiver.base}/ntfy/topic`, format: "ntfy", on: "answered" },
			store,
		);
		const board = boardFor(agent);
		const routine = await board.dispatch({ prompt: "ROUTINE refactor the parser", cwd: agent.cwd });
		const routineDone = await waitDone(board, routine.id, 90_000);
		expect(routineDone.state, routineDone.error).toBe("completed");
		await waitFor(() => receiver.delivered().length >= 2, "the answer at both receivers", 60_000);
		const waiting = await board.dispatch({ prompt: "ASK-WAIT choose", cwd: agent.cwd });
		await waitFor(
			async () => (await board.get(waiting.id))?.supervisorNote !== undefined,
			"the question left to the person",
			90_000,
		);
		await waitFor(() => receiver.delivered("/json").length >= 2, "the question left to the person", 60_000);
		await new Promise((r) => setTimeout(r, 2000));

		const json = receiver.delivered("/json").map((r) => JSON.parse(r.body) as Record<string, unknown>);
		expect(json.map((b) => [b.event, b.row])).toEqual([
			["answered", routine.id],
			["needs-input", waiting.id],
		]);
		expect(json[0]?.text).toBe(`"Should I continue with the refactor?" -> "yes, continue" by rule ${rules}:4`);
		expect(json[1]?.text).toBe("Which region?");
		const ntfy = receiver.delivered("/ntfy/");
		expect(ntfy).toHaveLength(1);
		expect(ntfy[0]?.headers).toMatchObject({
			title: "agent-board: ROUTINE refactor the parser answered by the supervisor",
			tags: "robot",
			priority: "2",
		});
		expect(ntfy[0]?.body).toBe(json[0]?.text);
		expect(receiver.got.length).toBe(3);
		await board.stop(waiting.id);
	}, 240_000);

	it("a failed row sends failed once, with its error, at json and ntfy", async () => {
		const receiver = await startReceiver();
		receivers.push(receiver);
		const agent = createTestAgent({
			script: { rules: [{ match: "BREAK-ME", steps: [{ error: "the provider refused: quota gone" }] }] },
		});
		agents.push(agent);
		const store = join(agent.root, "store");
		await runNotify({ verb: "add", name: "hook", url: `${receiver.base}/json`, on: "failed" }, store);
		await runNotify({ verb: "add", name: "phone", url: `${receiver.base}/ntfy/topic`, format: "ntfy" }, store);
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "BREAK-ME now", cwd: agent.cwd });
		expect((await waitDone(board, row.id, 90_000)).state).toBe("failed");
		await waitFor(() => receiver.delivered().length >= 2, "the failure at both receivers", 60_000);
		await new Promise((r) => setTimeout(r, 2000));
		const [hook] = receiver.delivered("/json").map((r) => JSON.parse(r.body) as Record<string, unknown>);
		expect(hook).toMatchObject({ event: "failed", row: row.id, name: "BREAK-ME now" });
		expect(String(hook?.text)).toContain("quota gone");
		const [ntfy] = receiver.delivered("/ntfy/");
		expect(ntfy?.headers).toMatchObject({ title: "agent-board: BREAK-ME now failed", tags: "x", priority: "4" });
		expect(ntfy?.body).toContain("quota gone");
		expect(receiver.got.length).toBe(2);
	}, 180_000);
});
