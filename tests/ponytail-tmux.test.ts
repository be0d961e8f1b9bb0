import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runPi, userTexts, waitFor } from "../test-support/pi-harness.ts";
import { useBoardTmux } from "../test-support/tmux-board.ts";

const tb = useBoardTmux();

describe("ponytail footer badge in interactive pi", () => {
	it("shows the mode, a busy dot while the agent runs, and follows /ponytail", async (ctx) => {
		const a = tb.agent();
		const release = join(a.root, "release");
		a.writeScript({
			rules: [{ match: "slow", steps: [{ waitForFile: release, then: { text: "slow-reply-done" } }] }],
		});
		const tmux = await tb.start(ctx, a);
		const start = await tmux.waitForText(/\u25cb ponytail full/);
		expect(start).toContain("ponytail: full");
		// A whole argument completes nothing, so enter submits.
		tmux.type("/ponytail ultra");
		tmux.keys("Enter");
		await tmux.waitForText(/\u25cb ponytail ultra/);
		tmux.type("slow");
		tmux.keys("Enter");
		await tmux.waitForText(/\u25cf ponytail ultra/);
		// While busy the skill command is queued as a follow-up, not rejected.
		tmux.type("/ponytail-help queued-arg ");
		tmux.keys("Enter");
		await tmux.waitForText('Follow-up: <skill name="ponytail-help"');
		writeFileSync(release, "");
		await tmux.waitForText("slow-reply-done");
		await waitFor(
			() => a.calls().some((call) => (userTexts(call).at(-1) ?? "").startsWith('<skill name="ponytail-help"')),
			"queued skill to reach the model",
		);
		const helpCall = a
			.calls()
			.find((call) => (userTexts(call).at(-1) ?? "").startsWith('<skill name="ponytail-help"'));
		expect(userTexts(helpCall!).at(-1)?.endsWith("queued-arg")).toBe(true);
		await tmux.waitForText(/\u25cb ponytail ultra/);
	});

	it("PONYTAIL_STATUS=0 hides the badge and quietStartup drops the startup notice; arguments complete", async (ctx) => {
		const agent = tb.agent();
		mkdirSync(join(agent.home, ".config/ponytail"), { recursive: true });
		writeFileSync(join(agent.home, ".config/ponytail/config.json"), JSON.stringify({ quietStartup: true }));
		const tmux = await tb.start(ctx, agent, { env: { PONYTAIL_STATUS: "0" } });
		tmux.type("/ponytail stat");
		await tmux.waitForText("/ponytail stat");
		// Typed during startup, the text can land before pi wires the editor's completion provider:
		// retyping the last letter asks again, as a user would.
		await waitFor(
			() => {
				if (/\u2192 status/.test(tmux.screen())) return true;
				tmux.keys("BSpace");
				tmux.type("t");
				return false;
			},
			() => `argument completion for /ponytail stat\n--- last screen ---\n${tmux.screen()}`,
			20_000,
			2_000,
		);
		tmux.type("us ");
		await tmux.waitForGone(/\u2192 status/);
		tmux.keys("Enter");
		const screen = await tmux.waitForText("current full, default full");
		expect(screen).not.toMatch(/[\u25cb\u25cf] ponytail/);
		expect(screen).not.toContain("ponytail: full");
	});

	it("restores the mode of the branch after /tree navigation", async (ctx) => {
		const agent = tb.agent();
		const session = join(agent.root, "session.jsonl");
		const setup = await runPi(agent, {
			args: ["--mode", "json", "-p", "--session", session, "--", "alpha-msg", "/ponytail ultra", "beta-msg"],
		});
		expect(setup.code, setup.stderr).toBe(0);
		const tmux = await tb.start(ctx, agent, { args: ["--session", session] });
		await tmux.waitForText(/\u25cb ponytail ultra/);
		tmux.type("/tree ");
		tmux.keys("Enter");
		await tmux.waitForText("(6/6)");
		// Up to the reply to alpha-msg, which precedes the /ponytail ultra entry.
		tmux.keys("Up", "Up", "Up");
		await tmux.waitForText("(3/6)");
		tmux.keys("Enter");
		await tmux.waitForText("Summarize branch?");
		tmux.keys("Enter");
		await tmux.waitForText(/\u25cb ponytail full/);
	});
});
