/** /agent-board outside the TUI: real pi in print mode prints a plain table and scripting output. */
import { afterEach, describe, expect, it } from "vitest";
import { createTestAgent, runPi, type TestAgent, waitFor } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterEach(() => {
	for (const agent of agents.splice(0)) agent.cleanup();
});

describe("/agent-board in print mode", { timeout: 90_000 }, () => {
	it("prints a table, dispatches, shows, archives and rejects bad arguments with usage", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Done: printed." }] } });
		agents.push(agent);
		const empty = await runPi(agent, { args: ["-p", "/agent-board"] });
		expect(empty.stdout).toBe("No board rows.\n");

		const dispatched = await runPi(agent, { args: ["-p", "/agent-board dispatch print me a report"] });
		const id = /^dispatched (\S+) \(print me a report\)$/m.exec(dispatched.stdout)?.[1];
		expect(id, dispatched.stdout + dispatched.stderr).toBeDefined();

		const table = await waitFor(
			async () => {
				const run = await runPi(agent, { args: ["-p", "/agent-board"] });
				return /completed/.test(run.stdout) ? run.stdout : "";
			},
			"row to complete",
			30_000,
		);
		expect(table.split("\n")[0]).toMatch(/^ID\s+STATE\s+NAME\s+AGE\s+MODEL\s+USAGE\s+SUMMARY$/);
		expect(table).toMatch(new RegExp(`^${id}\\s+completed\\s+print me a report\\s.*Done: printed\\.$`, "m"));

		const shown = await runPi(agent, { args: ["-p", `/agent-board show ${id}`] });
		expect(shown.stdout).toMatch(/^state:\s+completed$/m);
		expect(shown.stdout).toContain("latest:    Done: printed.");

		const archived = await runPi(agent, { args: ["-p", `/agent-board archive ${id}`] });
		expect(archived.stdout).toBe(`archived ${id}\n`);
		expect((await runPi(agent, { args: ["-p", "/agent-board"] })).stdout).toBe("No board rows.\n");
		expect((await runPi(agent, { args: ["-p", "/agent-board list --all"] })).stdout).toContain(id);

		const bad = await runPi(agent, { args: ["-p", "/agent-board stop"] });
		expect(bad.stdout).toBe("");
		expect(bad.code).toBe(1);
		expect(bad.stderr).toContain("stop needs a row id");
		expect(bad.stderr).toContain("usage: /agent-board");
		const unknown = await runPi(agent, { args: ["-p", "/agent-board show nosuchrow"] });
		expect(unknown.stderr).toContain('no row "nosuchrow"');
		expect(unknown.code).toBe(1);
		expect(archived.code).toBe(0);
	});
});
