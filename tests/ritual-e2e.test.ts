/**
 * The headless close ritual end to end: real pi, scripted faux model, a throwaway project that is
 * a git repository with .tasks/ and an AGENTS.md/CLAUDE.md carrying the trigger line. The ritual
 * runs from session_shutdown after print mode has written the task's answer (src/ritual/index.ts).
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TRIGGER_LINE } from "../src/ritual/opt-in.ts";
import { RITUAL_MARKER } from "../src/ritual/prompt.ts";
import type { FauxScript } from "../test-support/faux-script.ts";
import {
	createTestAgent,
	EXTENSION_ENTRY,
	type FauxCall,
	PI_CLI,
	parseJsonLines,
	REPO_ROOT,
	runPi,
	type TestAgent,
	userTexts,
} from "../test-support/pi-harness.ts";

const NOTE = ".tasks/handoffs/note.md";
/** Blank line inside, trailing spaces: print mode must pass it through untouched, then add one "\n". */
const ANSWER = "task-done\n\nsecond paragraph  ";
const WRITE_NOTE = {
	toolCall: { name: "bash", args: { command: `mkdir -p .tasks/handoffs && printf 'handoff\\n' > ${NOTE}` } },
};

/** The task takes a tool call and then answers; the ritual writes a note with a tool call, then answers. */
const SCRIPT: FauxScript = {
	rules: [
		{ match: RITUAL_MARKER, steps: [WRITE_NOTE, { text: `wrote ${NOTE}` }] },
		{ match: "do the task two", steps: [{ text: "task-two-done" }] },
		{
			match: "do the task",
			steps: [{ toolCall: { name: "bash", args: { command: "echo working" } } }, { text: ANSWER }],
		},
		{ match: "fail the task", steps: [{ error: "invalid request: scripted hard failure" }] },
	],
	fallback: [{ text: "unexpected prompt" }],
};

/** SCRIPT with the ritual's rule replaced. */
function withRitual(steps: FauxScript["rules"][number]["steps"]): FauxScript {
	return { ...SCRIPT, rules: [{ match: RITUAL_MARKER, steps }, ...SCRIPT.rules.slice(1)] };
}

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

function notes(project: string): string[] {
	try {
		return readdirSync(join(project, ".tasks/handoffs"));
	} catch {
		return [];
	}
}

/**
 * One prompt over `--mode rpc`: stdin stays open until the run has settled (rpc mode aborts a
 * running prompt when stdin ends), then closing it makes pi quit, which is where the ritual
 * would run in print mode. The timeout is a hang guard.
 */
function promptOverRpc(
	testAgent: TestAgent,
	cwd: string,
	message: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [PI_CLI, "-e", EXTENSION_ENTRY, "--mode", "rpc", "--no-session"], {
			cwd,
			env: testAgent.env,
			stdio: ["pipe", "pipe", "pipe"],
		});
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
			stdout += chunk;
			if (parseJsonLines(stdout).some((event) => event.type === "agent_settled")) child.stdin.end();
		});
		child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
		child.stdin.write(`${JSON.stringify({ type: "prompt", message })}\n`);
		const timer = setTimeout(() => {
			child.kill("SIGKILL");
			reject(new Error(`pi --mode rpc did not exit\nstderr: ${stderr}\nstdout: ${stdout.slice(-2000)}`));
		}, 45_000);
		child.on("error", reject);
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stdout, stderr });
		});
	});
}

const PRINT = ["-p", "--no-session", "--"];

describe("headless close ritual: stdout is the task's answer", () => {
	it("opted-in pi -p prints exactly what the same run prints without the ritual; one ritual ran and its note exists on return", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const plain = await runPi(agent, { cwd: makeProject(agent, { git: false }), args: [...PRINT, "do the task"] });
		expect(plain.code).toBe(0);
		expect(plain.stdout).toBe(`${ANSWER}\n`);
		expect(totalRitualPrompts(agent.calls())).toBe(0);

		const plainCalls = agent.calls().length;
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: [...PRINT, "do the task"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		expect(result.stdout).toBe(plain.stdout);
		// The note is on disk the moment pi -p has returned.
		expect(readFileSync(join(project, NOTE), "utf8")).toBe("handoff\n");

		const calls = agent.calls().slice(plainCalls);
		// task: tool call + answer; ritual: tool call + answer, and no second ritual after it.
		expect(calls.map(ritualCount)).toEqual([0, 0, 1, 1]);
		const firstRitual = calls[2]!;
		const last = firstRitual.messages.at(-1)!;
		const beforeRitual = firstRitual.messages.at(-2)!;
		expect(last.role).toBe("user");
		expect(JSON.stringify(last.content)).toContain("skills/session-handoff/SKILL.md");
		expect(beforeRitual.role).toBe("assistant");
		expect(JSON.stringify(beforeRitual.content)).toContain("task-done");
	});

	it("two prompts: prints the answer to the last one; one ritual, after the last prompt (CLAUDE.md opt-in)", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent, { file: "CLAUDE.md" });
		const result = await runPi(agent, { cwd: project, args: [...PRINT, "do the task one", "do the task two"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		expect(result.stdout).toBe("task-two-done\n");
		const calls = agent.calls();
		expect(totalRitualPrompts(calls)).toBe(1);
		const ritualCall = calls.find((call) => ritualCount(call) === 1)!;
		// The ritual saw both tasks: the note can cover the whole run.
		expect(userTexts(ritualCall).filter((text) => text.startsWith("do the task"))).toEqual([
			"do the task one",
			"do the task two",
		]);
		expect(notes(project)).toEqual(["note.md"]);
	});

	it("with a session file (no --no-session) the ritual also runs once and stdout is the answer", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: ["-p", "--", "do the task"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		expect(result.stdout).toBe(`${ANSWER}\n`);
		expect(totalRitualPrompts(agent.calls())).toBe(1);
		expect(existsSync(join(project, NOTE))).toBe(true);
	});
});

describe("headless close ritual: when it does not run", () => {
	it("not opted in (no .git): no ritual, the task's answer is the output", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent, { git: false });
		const result = await runPi(agent, { cwd: project, args: [...PRINT, "do the task"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		expect(result.stdout).toBe(`${ANSWER}\n`);
		expect(agent.calls()).toHaveLength(2);
		expect(totalRitualPrompts(agent.calls())).toBe(0);
		expect(existsSync(join(project, NOTE))).toBe(false);
	});

	it("--mode json in an opted-in project: no ritual, the event stream ends with the task", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: ["--mode", "json", ...PRINT, "do the task"] });
		expect(result.code).toBe(0);
		expect(result.events.at(-1)?.type).toBe("agent_settled");
		expect(agent.calls()).toHaveLength(2);
		expect(totalRitualPrompts(agent.calls())).toBe(0);
		expect(result.stdout).not.toContain(RITUAL_MARKER);
		expect(existsSync(join(project, NOTE))).toBe(false);
	});

	it("--mode rpc in an opted-in project: no ritual when the client closes the session", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent);
		const result = await promptOverRpc(agent, project, "do the task");
		expect(result.code, result.stderr).toBe(0);
		// The task ran to its answer (tool call + answer); closing stdin ended pi with no further request.
		expect(agent.calls()).toHaveLength(2);
		expect(totalRitualPrompts(agent.calls())).toBe(0);
		expect(result.stdout).not.toContain(RITUAL_MARKER);
		expect(existsSync(join(project, NOTE))).toBe(false);
	});

	it("a failed task gets no ritual, so pi -p still reports the failure with exit 1", async () => {
		agent = createTestAgent({ script: SCRIPT });
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: [...PRINT, "fail the task"] });
		expect(result.code).toBe(1);
		expect(result.stdout).toBe("");
		expect(result.stderr).toContain("scripted hard failure");
		expect(agent.calls()).toHaveLength(1);
		expect(totalRitualPrompts(agent.calls())).toBe(0);
		expect(notes(project)).toEqual([]);
	});

	it("waits for auto-retry: a transient task error that pi retries gets the ritual once, after the retried answer", async () => {
		agent = createTestAgent({
			settings: { retry: { enabled: true, maxRetries: 2, baseDelayMs: 10 } },
			script: {
				...SCRIPT,
				rules: [
					{ match: "do the task", steps: [{ error: "503 service unavailable (scripted)" }] },
					...SCRIPT.rules,
				],
			},
		});
		writeFileSync(join(agent.agentDir, "faux-script-after-error.json"), JSON.stringify(SCRIPT));
		copyFileSync(
			join(REPO_ROOT, "test-support/faux-transient-error-extension.ts"),
			join(agent.agentDir, "extensions", "faux-transient-error.ts"),
		);
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: [...PRINT, "do the task"] });
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		expect(result.stdout).toBe(`${ANSWER}\n`);
		const calls = agent.calls();
		// failed attempt, retried task (tool call + answer), ritual (tool call + answer)
		expect(calls.map(ritualCount)).toEqual([0, 0, 0, 1, 1]);
		const beforeRitual = calls[3]!.messages.at(-2)!;
		expect(beforeRitual.role).toBe("assistant");
		expect(JSON.stringify(beforeRitual.content)).toContain("task-done");
		expect(existsSync(join(project, NOTE))).toBe(true);
	});
});

describe("headless close ritual: a failing ritual", () => {
	it("a ritual whose model request fails keeps the task's answer and exit 0, and says why on stderr", async () => {
		// The reason carries an escape sequence: model/provider text must not reach the terminal raw.
		agent = createTestAgent({ script: withRitual([{ error: "ritual provider down \u001b[31mred" }]) });
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: [...PRINT, "do the task"] });
		expect(result.code).toBe(0);
		expect(result.stdout).toBe(`${ANSWER}\n`);
		expect(result.stderr).toBe(
			"session-handoff ritual failed (the task's answer stands): ritual provider down [31mred\n",
		);
		expect(totalRitualPrompts(agent.calls())).toBe(1);
		expect(agent.calls()).toHaveLength(3);
		expect(notes(project)).toEqual([]);
	});

	it("a ritual turn that writes no note is reported on stderr and does not change stdout or the exit code", async () => {
		agent = createTestAgent({ script: withRitual([{ text: "I wrote nothing" }]) });
		const project = makeProject(agent);
		const result = await runPi(agent, { cwd: project, args: [...PRINT, "do the task"] });
		expect(result.code).toBe(0);
		expect(result.stdout).toBe(`${ANSWER}\n`);
		expect(result.stderr).toBe(
			"session-handoff ritual failed (the task's answer stands): no new note appeared in .tasks/handoffs/\n",
		);
		expect(totalRitualPrompts(agent.calls())).toBe(1);
	});
});
