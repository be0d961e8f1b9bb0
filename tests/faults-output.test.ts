/**
 * Fault battery, round two (issue #20), what reaches the user, end to end with the real pi: output
 * through a pipe arrives whole (case 9), an error row has an age, not 20790d, and a stop ends a tool's
 * child that left the run's tag and process group behind (case 10), agent-made text in compare is
 * sanitised (case 7).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isAlive, processStartTime, RUN_TAG } from "../runner/store/proc.mjs";
import { storePaths } from "../src/board/engine/paths.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { git, initRepo } from "../test-support/git-repo.ts";
import { writeRow } from "../test-support/hardening-fixtures.ts";
import {
	createTestAgent,
	EXTENSION_ENTRY,
	PI_CLI,
	runPi,
	waitFor,
	type TestAgent,
} from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
const strays: Array<{ pid: number; start: string }> = [];
const scratch: string[] = [];
afterAll(() => {
	for (const stray of strays) if (isAlive(stray.pid, stray.start)) process.kill(stray.pid, "SIGKILL");
	for (const agent of agents) agent.cleanup();
	for (const dir of scratch) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

function agentWith(options: Parameters<typeof createTestAgent>[0] = {}): TestAgent {
	const agent = createTestAgent(options);
	agents.push(agent);
	return agent;
}

/** Live processes whose argv is exactly `argv`. */
function processesWith(argv: string[]): number[] {
	const wanted = `${argv.join("\0")}\0`;
	return readdirSync("/proc")
		.filter((name) => /^\d+$/.test(name))
		.filter((name) => {
			try {
				return readFileSync(`/proc/${name}/cmdline`, "utf8") === wanted;
			} catch {
				return false;
			}
		})
		.map(Number);
}

/** Bidi controls, line and paragraph separators, C0 (but \n) and C1: none may reach a terminal. */
const UNSAFE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
// Each attempt names a file with U+202E (RLO) and writes U+202E, U+2028 and an OSC title into it.
const HOSTILE_FILES = [
	`f="$(printf 'evil\\342\\200\\256gnp.sh')"`,
	`printf 'row %s \\342\\200\\256 reversed\\nsep \\342\\200\\250 here \\033]0;owned\\007 end\\n' "$AGENT_BOARD_ROW" > "$f"`,
	"echo wrote",
].join(" && ");

describe("fault battery: what reaches the user", () => {
	it("case 7: agent-made file names and contents in compare are sanitised where the engine hands them out, and in the commands", async () => {
		const agent = agentWith({
			script: {
				rules: [
					{
						match: "HOSTILE-FILES",
						steps: [{ toolCall: { name: "bash", args: { command: HOSTILE_FILES } } }, { text: "Wrote." }],
					},
				],
			},
		});
		const repo = initRepo(join(agent.root, "repo"), { "README.md": "# project\n" });
		git(repo, "config", "core.quotePath", "false");
		const board = boardFor(agent);
		const [a, b] = await board.dispatchAttempts({ prompt: "HOSTILE-FILES name files", cwd: repo, count: 2 });
		for (const row of [a!, b!]) expect((await waitDone(board, row.id)).state).toBe("completed");
		// The worktree really holds the hostile name: the test fails if the agent's bytes were tame.
		expect(readdirSync(a!.worktreePath!)).toContain("evil\u202egnp.sh");

		const set = await board.compare(a!.id);
		const files = set.rows.flatMap((entry) => entry.files);
		expect(files).toEqual(["evil\ufffdgnp.sh", "evil\ufffdgnp.sh"]);
		const diff = await board.compareDiff(a!.id, b!.id);
		expect(diff.filter((line) => UNSAFE.test(line))).toEqual([]);
		expect(diff).toContain(`-row ${a!.id} \ufffd reversed`);
		expect(diff).toContain(" sep   here  end");
		const command = (args: string) =>
			runPi(agent, { args: ["-p", `/agent-board ${args}`], cwd: repo, env: { AGENT_BOARD_DIR: board.storeDir } });
		for (const out of [await command(`compare ${a!.id}`), await command(`compare ${a!.id} ${b!.id}`)]) {
			expect(out.code, out.stderr).toBe(0);
			expect(out.stdout).toContain("evil\ufffdgnp.sh");
			expect(out.stdout).not.toMatch(UNSAFE);
		}
	}, 120_000);

	it("case 9 and 10: every line of a 5,001-line list arrives through a pipe; an error row's age is its directory's, not 20790d", async () => {
		const agent = agentWith();
		// 5,000 rows are 25,000 directories and files: in memory when the machine has /dev/shm (a loaded
		// disk took 20 s to remove them).
		const base = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "pab-list-"));
		scratch.push(base);
		const store = join(base, "store");
		agent.env.AGENT_BOARD_DIR = store;
		mkdirSync(join(store, "rows"), { recursive: true, mode: 0o700 });
		const paths = storePaths(store);
		const now = Date.now();
		for (let n = 0; n < 4998; n++) writeRow(paths, `row-${String(n).padStart(5, "0")}`, { at: now - n * 1000 });
		writeRow(paths, "broken-meta");
		writeRow(paths, "time-zero", { statusPatch: { lastActivityAt: 0 } });
		writeFileSync(paths.meta("broken-meta"), "{ torn");
		const copy = join(base, "list.txt");
		const counted = execFileSync(
			"sh",
			[
				"-c",
				`"$0" "$1" -e "$2" -p "/agent-board list --all" | tee "$3" | wc -l`,
				process.execPath,
				PI_CLI,
				EXTENSION_ENTRY,
				copy,
			],
			{
				cwd: agent.cwd,
				env: agent.env,
				encoding: "utf8",
				timeout: 120_000,
			},
		);
		expect(Number(counted.trim())).toBe(5001);
		const list = readFileSync(copy, "utf8");
		const age = /^broken-meta\s+error\s+broken-meta\s+(\S+)\s/m.exec(list)?.[1];
		expect(age, list.slice(0, 400)).toMatch(/^\d+s$/);
		// A time nobody recorded (0) is an unknown age.
		expect(list).toMatch(/^time-zero\s+completed\s+row time-zero\s+\?\s/m);
	}, 180_000);

	it("case 10: a stop ends a tool's child that wiped the run's tag (env -i) and left its process group (setsid)", async () => {
		const agent = agentWith({
			// Not the script's last command, so bash forks for it and waits: its parent link stays while it runs.
			script: {
				rules: [
					{
						match: "DETACH",
						steps: [
							{ toolCall: { name: "bash", args: { command: "env -i setsid sleep 3017; echo after" } } },
							{ text: "unreachable" },
						],
					},
				],
			},
		});
		const board = boardFor(agent, { stopGraceMs: 500 });
		const row = await board.dispatch({ prompt: "DETACH start a child", cwd: agent.cwd });
		const pid = await waitFor(() => processesWith(["sleep", "3017"])[0], "the tool's detached child", 30_000);
		const start = processStartTime(pid);
		expect(start).toBeDefined();
		strays.push({ pid, start: start ?? "" });
		// The tag cannot find it: its environment is empty.
		expect(readFileSync(`/proc/${pid}/environ`, "utf8")).not.toContain(RUN_TAG);
		await board.stop(row.id);
		// On a loaded machine the runner may record the stop after stop() returned: wait for the end it records.
		expect((await waitDone(board, row.id)).state).toBe("stopped");
		await waitFor(() => !isAlive(pid, start), "the detached child to be ended by the stop", 10_000);
	}, 120_000);
});
