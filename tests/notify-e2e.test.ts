/**
 * Notifiers (issue #39): a row's question, its end and a supervisor's answer reach loopback receivers
 * in each format (json, ntfy, slack, discord: headers and bodies as the services document them), with
 * no board open (the store's keeper delivers the outbox); a receiver down for a while gets what it
 * missed, each event once, in order; the URL holds a secret and is never printed whole.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BoardRow } from "../src/board/engine/types.ts";
import { processStartTime } from "../runner/store/proc.mjs";
import { runNotify } from "../src/board/subcommands/notify-command.ts";
import { boardFor } from "../test-support/board-helpers.ts";
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
