/**
 * The transcript says who answered a question: a rule (its file:line), the supervisor's model, or the
 * person. Real pi runs with a scripted model: the supervisor's answer goes in as the person's would, and
 * the worker's session records who decided it; the board's transcript view shows it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { updatePolicy } from "../runner/life/policy.mjs";
import { readTranscript } from "../src/board/view-model/transcript.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { harnessPerTest } from "../test-support/dashboard-harness.ts";
import { flushReports, KEY } from "../test-support/fake-board-service.ts";
import type { FauxStep } from "../test-support/faux-script.ts";
import { createTestAgent, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});
const harness = harnessPerTest();

const ask = (question: string): FauxStep => ({ toolCall: { name: "ask_user", args: { question } } });

describe("who answered, in the transcript", () => {
	it("credits a rule with its file:line, the model, and the person", async () => {
		const agent = createTestAgent({
			script: {
				rules: [
					{
						match: "Which test runner should I use?",
						steps: [{ text: '{"decision":"answer","answer":"vitest"}' }],
					},
					{
						match: "What should the module be called?",
						steps: [{ text: '{"decision":"ask","why":"naming is yours"}' }],
					},
					{ match: "RULE-TASK", steps: [ask("Should I continue with the refactor?"), { text: "Refactored." }] },
					{ match: "MODEL-TASK", steps: [ask("Which test runner should I use?"), { text: "Tests added." }] },
					{ match: "PERSON-TASK", steps: [ask("What should the module be called?"), { text: "Named." }] },
				],
				fallback: [{ text: '{"decision":"ask","why":"no script"}' }],
			},
		});
		agents.push(agent);
		const rulesFile = join(agent.agentDir, "agent-board", "rules.md");
		mkdirSync(join(agent.agentDir, "agent-board"), { recursive: true });
		writeFileSync(rulesFile, '# Rules\n\n## Rules\n- when question says "continue": answer "yes, continue"\n');
		const board = boardFor(agent);
		await updatePolicy(board.storeDir, (policy) => (policy.supervisor = { model: "faux/faux-1" }));

		const byRule = await board.dispatch({ prompt: "RULE-TASK refactor", cwd: agent.cwd });
		const byModel = await board.dispatch({ prompt: "MODEL-TASK add tests", cwd: agent.cwd });
		const byPerson = await board.dispatch({ prompt: "PERSON-TASK split", cwd: agent.cwd });
		await waitFor(
			async () => (await board.get(byPerson.id))?.supervisorNote !== undefined,
			"the model to leave the naming question to the person",
			90_000,
		);
		expect((await board.reply(byPerson.id, "tokenizer")).delivery).toBe("answer");
		const rows = await Promise.all([byRule, byModel, byPerson].map((row) => waitDone(board, row.id, 90_000)));
		expect(rows.map((row) => row.state)).toEqual(["completed", "completed", "completed"]);

		const answers = await Promise.all(
			rows.map(async (row) => (await readTranscript(row.sessionFile)).filter((entry) => entry.sent === "answer")),
		);
		expect(answers[0]).toEqual([{ role: "user", text: "yes, continue", sent: "answer", by: `rule ${rulesFile}:4` }]);
		expect(answers[1]).toEqual([{ role: "user", text: "vitest", sent: "answer", by: "model" }]);
		expect(answers[2]).toEqual([{ role: "user", text: "tokenizer", sent: "answer" }]);

		// The board's transcript view: the rule, the model, or you.
		const shown: string[] = [];
		for (const row of rows) {
			const h = await harness([row], {
				termRows: 40,
				readTranscript: async (one) => readTranscript(one.sessionFile),
			});
			await h.press(KEY.enter, "t");
			await flushReports();
			shown.push(
				await waitFor(() => (/\(answer/.test(h.screen(200)) ? h.screen(200) : undefined), "the transcript", 10_000),
			);
		}
		const all = shown.join("\n");
		expect(all).toMatch(
			new RegExp(
				`rule\\s+\\(answer by rule ${rulesFile.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:4\\) yes, continue`,
			),
		);
		expect(all).toMatch(/model\s+\(answer by model\) vitest/);
		expect(all).toMatch(/you\s+\(answer\) tokenizer/);
		expect(all).not.toMatch(/you\s+\(answer\) (yes, continue|vitest)/);
	}, 240_000);
});
