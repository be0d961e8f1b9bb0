/**
 * The headless close ritual end to end: real pi, scripted faux model, a throwaway project that is
 * a git repository with .tasks/ and an AGENTS.md/CLAUDE.md carrying the trigger line.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TRIGGER_LINE } from "../src/ritual/opt-in.ts";
import { RITUAL_MARKER } from "../src/ritual/prompt.ts";
import type { FauxScript } from "../test-support/faux-script.ts";
import { createTestAgent, type FauxCall, REPO_ROOT, runPi, type TestAgent, userTexts } from "../test-support/pi-harness.ts";

const NOTE = ".tasks/handoffs/note.md";

/** The task takes a tool call and then answers; the ritual writes a note with a tool call, then answers. */
const SCRIPT: FauxScript = {
	rules: [
		{
			match: RITUAL_MARKER,
			steps: [
				{ toolCall: { name: "bash", args: { command: `mkdir -p .tasks/handoffs && printf 'handoff\\n' > ${NOTE}` } } },
				{ text: `wrote ${NOTE}` },
			],
		},
		{ match: "do the task", steps: [{ toolCall: { name: "bash", args: { command: "echo working" } } }, { text: "task-done" }] },
		{ match: "fail the task", steps: [{ error: "invalid request: scripted hard failure" }] },
	],
	fallback: [{ text: "unexpected prompt" }],
};

let agent: TestAgent | undefined;
afterEach(() => {
	agent?.cleanup();
	agent = undefined;
});

interface ProjectOptions {
	file?: "AGENTS.md" | "CLAUDE.md";
	git?: boolean;
	tasks?: boolean;
}

function makeProject(testAgent: TestAgent, options: ProjectOptions = {}): string {
	const dir = mkdtempSync(join(testAgent.root, "project-"));
	if (options.git ?? true) {
		const init = spawnSync("git", ["init", "-q", dir], { env: testAgent.env, encoding: "utf8" });
		if (init.status !== 0) throw new Error(`git init failed: ${init.stderr}`);
	}
	if (options.tasks ?? true) mkdirSync(join(dir, ".tasks"));
	writeFileSync(join(dir, options.file ?? "AGENTS.md"), `# Project rules\n\n- ${TRIGGER_LINE}\n`);
	return dir;
}

function ritualCount(call: FauxCall): number {
	return userTexts(call).filter((text) => text.includes(RITUAL_MARKER)).length;
}

function totalRitualPrompts(calls: FauxCall[]): number {
	// Each request carries the whole history, so the most ritual prompts any request saw is how many were sent.
	return Math.max(0, ...calls.map(ritualCount));
}

describe("headless close ritual", () => {
	it("opted-in pi -p: after the task the model gets exactly one ritual prompt, the ritual turn's end adds none, exit 0", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: ["-p", "--no-session", "--", "do the task"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		expect(result.stdout).toBe(`wrote ${NOTE}\n`);

		const calls = agent.calls();
		// task: tool call + answer; ritual: tool call + answer. A second ritual would add requests.
		expect(calls).toHaveLength(4);
		expect(calls.map(ritualCount)).toEqual([0, 0, 1, 1]);
		const firstRitual = calls[2]!;
		const last = firstRitual.messages.at(-1)!;
		const beforeRitual = firstRitual.messages.at(-2)!;
		expect(last.role).toBe("user");
		expect(JSON.stringify(last.content)).toContain("skills/session-handoff/SKILL.md");
		expect(beforeRitual.role).toBe("assistant");
		expect(JSON.stringify(beforeRitual.content)).toContain("task-done");
		// The ritual turn really ran: its tool call wrote the note in the project.
		expect(readFileSync(join(project, NOTE), "utf8")).toBe("handoff\n");
	});

	it("holds one ritual per session across several prompts of one run (CLAUDE.md opt-in)", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent, { file: "CLAUDE.md" });
		const result = await runPi(agent, { cwd: project, args: ["-p", "--no-session", "--", "do the task one", "do the task two"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		const calls = agent.calls();
		expect(userTexts(calls.at(-1)!).filter((text) => text.startsWith("do the task"))).toEqual(["do the task one", "do the task two"]);
		expect(totalRitualPrompts(calls)).toBe(1);
	});

	it("not opted in (no .git): no ritual, the task's answer is the output", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent, { git: false });
		const result = await runPi(agent, { cwd: project, args: ["-p", "--no-session", "--", "do the task"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		expect(result.stdout).toBe("task-done\n");
		expect(agent.calls()).toHaveLength(2);
		expect(totalRitualPrompts(agent.calls())).toBe(0);
		expect(existsSync(join(project, NOTE))).toBe(false);
	});

	it("--mode json in an opted-in project: no ritual", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: ["--mode", "json", "-p", "--no-session", "--", "do the task"] });
		expect(result.code).toBe(0);
		expect(result.events.at(-1)?.type).toBe("agent_settled");
		expect(agent.calls()).toHaveLength(2);
		expect(totalRitualPrompts(agent.calls())).toBe(0);
		expect(result.stdout).not.toContain(RITUAL_MARKER);
	});

	it("a failed task gets no ritual, so pi -p still reports the failure", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: ["-p", "--no-session", "--", "fail the task"] });
		expect(result.code).toBe(1);
		expect(result.stderr).toContain("scripted hard failure");
		expect(agent.calls()).toHaveLength(1);
		expect(totalRitualPrompts(agent.calls())).toBe(0);
	});

	it("waits for auto-retry: a transient task error that pi retries gets the ritual once, after the retried answer", async () => {
		agent = createTestAgent({
			settings: { retry: { enabled: true, maxRetries: 2, baseDelayMs: 10 } },
			script: { ...SCRIPT, rules: [{ match: "do the task", steps: [{ error: "503 service unavailable (scripted)" }] }, ...SCRIPT.rules] },
		});
		writeFileSync(join(agent.agentDir, "faux-script-after-error.json"), JSON.stringify(SCRIPT));
		copyFileSync(join(REPO_ROOT, "test-support/faux-transient-error-extension.ts"), join(agent.agentDir, "extensions", "faux-transient-error.ts"));
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: ["-p", "--no-session", "--", "do the task"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		const calls = agent.calls();
		// failed attempt, retried task (tool call + answer), ritual (tool call + answer)
		expect(calls.map(ritualCount)).toEqual([0, 0, 0, 1, 1]);
		const beforeRitual = calls[3]!.messages.at(-2)!;
		expect(beforeRitual.role).toBe("assistant");
		expect(JSON.stringify(beforeRitual.content)).toContain("task-done");
		expect(existsSync(join(project, NOTE))).toBe(true);
	});

	it("a ritual whose delivery pi rejects is not retried on the next prompt and does not crash pi", async () => {
		agent = createTestAgent({ script: SCRIPT });
		// A second extension in the agent dir spoils the first settle proposal, so pi's own
		// validation throws on it and drops the ritual (see test-support/ritual-sabotage-extension.ts).
		copyFileSync(join(REPO_ROOT, "test-support/ritual-sabotage-extension.ts"), join(agent.agentDir, "extensions", "ritual-sabotage.ts"));
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: ["-p", "--no-session", "--", "do the task one", "do the task two"] });
		expect(result.code).toBe(0);
		expect(result.stdout).toBe("task-done\n");
		const stderrLines = result.stderr.split("\n").filter((line) => line.trim() !== "");
		expect(stderrLines).toHaveLength(1);
		expect(stderrLines[0]).toMatch(/^Extension error \(.*ritual-sabotage\.ts\): Invalid boundary entries: /);
		const calls = agent.calls();
		// Both prompts ran (two requests each) and neither settle delivered a ritual.
		expect(calls).toHaveLength(4);
		expect(userTexts(calls.at(-1)!)).toEqual(["do the task one", "do the task two"]);
		expect(totalRitualPrompts(calls)).toBe(0);
		expect(existsSync(join(project, NOTE))).toBe(false);
	});
});
