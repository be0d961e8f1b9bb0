import { afterEach, describe, expect, it } from "vitest";
import { assistantText, createTestAgent, runPi, type TestAgent, userTexts } from "../test-support/pi-harness.ts";
import { startPiInTmux, type TmuxSession } from "../test-support/tmux.ts";
import { requireTmux } from "../test-support/tmux-board.ts";

let agent: TestAgent | undefined;
let tmuxSession: TmuxSession | undefined;
afterEach(() => {
	tmuxSession?.kill();
	agent?.cleanup();
	agent = undefined;
	tmuxSession = undefined;
});

describe("test harness", () => {
	it("runs real pi in json mode against the scripted model and records the request", async () => {
		agent = createTestAgent({ script: { rules: [{ match: "ping", steps: [{ text: "pong \u2028 done" }] }] } });
		const result = await runPi(agent, { args: ["--mode", "json", "-p", "--no-session", "--", "ping"] });
		expect(result.code).toBe(0);
		expect(result.events.at(-1)?.type).toBe("agent_settled");
		expect(assistantText(result.events)).toBe("pong \u2028 done");
		const calls = agent.calls();
		expect(calls).toHaveLength(1);
		expect(userTexts(calls[0]!)).toEqual(["ping"]);
	});

	it("plays multi-step rules: a tool call, then text after the tool result", async () => {
		agent = createTestAgent({
			script: {
				rules: [
					{
						match: "list",
						steps: [{ toolCall: { name: "bash", args: { command: "echo hi-from-tool" } } }, { text: "listed" }],
					},
				],
			},
		});
		const result = await runPi(agent, { args: ["--mode", "json", "-p", "--no-session", "--", "list files"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		const toolEnd = result.events.find((event) => event.type === "tool_execution_end");
		expect(JSON.stringify(toolEnd)).toContain("hi-from-tool");
		expect(assistantText(result.events)).toBe("listed");
	});

	it("reports scripted model errors the way pi does: exit 0 with stopReason error", async () => {
		agent = createTestAgent({ script: { rules: [], fallback: [{ error: "scripted failure" }] } });
		const result = await runPi(agent, { args: ["--mode", "json", "-p", "--no-session", "--", "x"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		const end = result.events.filter((event) => event.type === "message_end").at(-1);
		expect(JSON.stringify(end)).toContain('"stopReason":"error"');
		expect(JSON.stringify(end)).toContain("scripted failure");
	});

	it("drives interactive pi through tmux", async (ctx) => {
		requireTmux(ctx);
		agent = createTestAgent({ script: { rules: [{ match: "hello", steps: [{ text: "tmux-visible-reply" }] }] } });
		tmuxSession = startPiInTmux(agent, { withExtension: false });
		await tmuxSession.waitForText("faux-1");
		tmuxSession.type("hello");
		tmuxSession.keys("Enter");
		await tmuxSession.waitForText("tmux-visible-reply");
	});
});
