/**
 * A power a row's kind cannot honour is refused at dispatch with the reason, before anything starts:
 * a `$` budget on a model pi has no cost data for (named), in real pi (the extension hands pi's model
 * registry to the check). A budget on a row that runs on a target is taken, at dispatch and later (its
 * link holds it: budget-target-e2e.test.ts), and so is the supervisor on (its link decides the row's
 * questions: kinds-supervisor-e2e).
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { updatePolicy } from "../runner/life/policy.mjs";
import { createTestAgent, runPi, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("powers refused at dispatch", { timeout: 180_000 }, () => {
	it("names the model a $ budget cannot be reached with; takes a budget on a target", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Done." }] } });
		agents.push(agent);
		const store = join(agent.root, "store");
		agent.env.AGENT_BOARD_DIR = store;
		const git = (...args: string[]) => execFileSync("git", args, { cwd: agent.cwd, stdio: "pipe" });
		git("init", "-q", "-b", "main");
		writeFileSync(join(agent.cwd, "a.txt"), "a\n");
		git("add", ".");
		git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a");
		const pi = async (command: string) => {
			const run = await runPi(agent, { args: ["-p", command] });
			return `${run.stdout}${run.stderr}`;
		};

		expect(await pi("/agent-board dispatch --budget $2 price check")).toContain(
			"its budget ($2.00) cannot be reached with faux/faux-1: pi has no cost data for that model (its spend stays $0.00). Give a token budget (50k) instead",
		);
		expect(await pi("/agent-board targets add box1 --ssh nobody@127.0.0.1 --max 2")).toContain("added target box1");
		// Nothing was started by any refusal.
		expect(await pi("/agent-board")).toBe("No board rows.\n");
		// Neither a budget nor the supervisor is a refusal on a target: its link holds the one (budget-target-e2e)
		// and decides the other's questions (kinds-supervisor-e2e); at dispatch, with the target's daily budget, and later.
		await updatePolicy(store, (policy) => {
			policy.budgets = { targets: { box1: { tokens: 5000 } } };
			policy.supervisor = { model: "faux/faux-1" };
		});
		expect(await pi("/agent-board dispatch --on box1 --budget 10 remote budgeted")).toMatch(
			/^dispatched \S+ \(remote budgeted\)/m,
		);
		const remote = /^dispatched (\S+) /m.exec(await pi("/agent-board dispatch --on box1 remote work"))?.[1];
		expect(remote).toBeDefined();
		expect(await pi(`/agent-board budget ${remote} 10k`)).toContain(`${remote}: this row's budget is now 10k tokens`);
		// A token budget on this machine is taken.
		expect(await pi("/agent-board dispatch --budget 50k priced fine")).toMatch(/^dispatched \S+ \(priced fine\)$/m);
	});
});
