/**
 * The new-agent form on the real engine: the preset picked as the form's first option sets the model,
 * thinking and ponytail mode of the real worker and gives it the preset's instructions (the scripted
 * model's request shows each). The board is the real component rendered at a width; the service, the
 * runner and pi are real.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { dashboardHarness } from "../test-support/dashboard-harness.ts";
import { flushReports, KEY } from "../test-support/fake-board-service.ts";
import { allSystemText, createTestAgent, userTexts, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("a preset from the form, on the real engine", () => {
	it("sets the worker's model, thinking, mode and instructions", async () => {
		const agent = createTestAgent({ script: { rules: [{ match: "FORM-PRESET", steps: [{ text: "Checked." }] }] } });
		agents.push(agent);
		mkdirSync(join(agent.agentDir, "agents"), { recursive: true });
		writeFileSync(
			join(agent.agentDir, "agents", "careful.md"),
			"---\nname: careful\ndescription: Slow and careful\nmodel: faux/faux-2\nthinking: low\nponytail: ultra\n---\n\nFORM-PRESET-SYSTEM: check twice.\n",
		);
		const service = boardFor(agent);
		const h = await dashboardHarness([], { service, cwd: agent.cwd, prefs: {} });
		try {
			await h.press("n", "\x1b[200~FORM-PRESET check the config\x1b[201~", "\x0f", KEY.enter);
			expect(h.screen()).toMatch(/preset\s+careful/);
			await h.press("s");
			await flushReports();
			const [row] = await waitFor(
				async () => {
					const rows = await service.list();
					return rows.length === 1 ? rows : undefined;
				},
				"the dispatched row",
				30_000,
			);
			const done = await waitDone(service, row!.id, 60_000);
			expect(done).toMatchObject({
				state: "completed",
				preset: "careful",
				model: "faux/faux-2",
				thinking: "low",
				ponytailMode: "ultra",
			});
			const [call] = agent.calls().filter((c) => userTexts(c)[0] === "FORM-PRESET check the config");
			expect(call?.model).toBe("faux-2");
			expect(allSystemText(call!)).toContain("FORM-PRESET-SYSTEM: check twice.");
			expect(allSystemText(call!)).toContain("PONYTAIL MODE ACTIVE - level: ultra");
			// The preset's choices were not remembered for the next form.
			expect(h.saved).toEqual([]);
		} finally {
			h.dispose();
		}
	}, 120_000);
});
