/**
 * Targets you can change: `targets set` changes a target's fields in place (a pool's member too), each
 * checked as `targets add` checks it; `targets drain` has a target take nothing new (the queue starts
 * nothing there, a pool places nothing there) until `undrain`; `targets` says a target is drained,
 * unreachable since when, or failing its last check, never `ok` for a member failing its check.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readBoardConfig, readLimits } from "../runner/life/board-config.mjs";
import { claimMemberSlot } from "../runner/life/place-run.mjs";
import { enqueue, pumpQueue } from "../runner/life/queue.mjs";
import { initialStatus } from "../runner/life/state-rules.mjs";
import { writeHealth } from "../runner/life/target-health.mjs";
import { processStartTime } from "../runner/store/proc.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import { formatTargets, parseTargetsCommand, runTargetsCommand } from "../src/board/subcommands/targets-command.ts";

const dirs: string[] = [];
function scratch(): string {
	const dir = mkdtempSync(join(tmpdir(), "kinds-tchange-"));
	dirs.push(dir);
	return dir;
}
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});

async function board() {
	const store = scratch();
	const service = createBoardService({
		storeDir: store,
		env: { ...process.env, AGENT_BOARD_DIR: store, AGENT_BOARD_KEEPER: "off" },
	});
	const run = async (words: string) => {
		const parsed = parseTargetsCommand(words);
		if (!parsed.ok) throw new Error(parsed.error);
		return runTargetsCommand(service, parsed);
	};
	await run("add box1 --ssh me@box1 --max 2");
	await run("add box2 --ssh me@box2 --max 2");
	await run("add build --pool box1,box2");
	return { store, service, run };
}

function queuedRun(store: string, rowId: string, target: string): string {
	const runId = `run-${rowId}`;
	const runDir = join(store, "rows", rowId, "runs", runId);
	mkdirSync(runDir, { recursive: true });
	writeFileSync(join(runDir, "status.json"), JSON.stringify(initialStatus(runId, rowId, Date.now())));
	writeFileSync(join(runDir, "run.json"), "{}");
	enqueue(store, { rowId, runId, target });
	return runDir;
}
const claimed = (runDir: string) => readdirSync(runDir).includes("claim.json");
const owner = { pid: process.pid, start: processStartTime(process.pid), runId: "probe" };

describe("targets set", () => {
	it("changes a member's limit while it is in a pool, for the next placement; refuses what add would", async () => {
		const { store, run } = await board();
		expect(await run("set box1 --max 3")).toBe(
			"changed target box1: ssh me@box1 (dir .agent-board), up to 3 at a time (from its next placement)",
		);
		expect(readBoardConfig(store).targets.box1).toMatchObject({ kind: "ssh", host: "me@box1", max: 3 });
		expect(readBoardConfig(store).targets.build?.members).toEqual(["box1", "box2"]);
		expect(readLimits(store).targets.get("box1")).toBe(3);
		await run("set box2 --env OPENAI_API_KEY --env OTHER --dir work/boards");
		expect(readBoardConfig(store).targets.box2).toMatchObject({
			env: ["OPENAI_API_KEY", "OTHER"],
			dir: "work/boards",
		});
		await run("set build --pool box2 --max 5");
		expect(readBoardConfig(store).targets.build).toMatchObject({ members: ["box2"], max: 5 });
		await expect(run("set box1 --max 0")).rejects.toThrow(/--max must be a whole number from 1 to 256/);
		await expect(run("set box1 --image alpine")).rejects.toThrow(/--image is not a field of a ssh target/);
		await expect(run("set box1 --dir /srv/boards")).rejects.toThrow(/is absolute: give --dir-absolute/);
		await expect(run("set build --pool box1,build")).rejects.toThrow(/build is a pool itself/);
		await expect(run("set nowhere --max 2")).rejects.toThrow(/unknown target nowhere/);
		expect(parseTargetsCommand("set box1")).toEqual({
			ok: false,
			error: "targets set box1: say what to change (--max <n>, ...)",
		});
		expect(parseTargetsCommand("set box1 --max")).toEqual({ ok: false, error: "targets set: --max needs a value" });
		// Nothing refused was written.
		expect(readBoardConfig(store).targets.box1).toMatchObject({ max: 3, dir: ".agent-board" });
	});
});

describe("targets drain", () => {
	it("a drained target starts nothing; a drained member takes nothing from its pool; undrain takes it back", async () => {
		const { store, service, run } = await board();
		expect(await run("drain box1")).toBe("drained box1: it takes nothing new (undo: targets undrain box1)");
		expect(formatTargets(await service.targets.list())).toMatch(/^box1\s.*\sdrained \(takes nothing new\)$/m);
		// The queue starts nothing on a drained target: its run waits, unclaimed.
		const waiting = queuedRun(store, "w1", "box1");
		expect(pumpQueue(store, { maxConcurrent: 1, node: process.execPath, env: process.env })).toEqual({ started: [] });
		expect(claimed(waiting)).toBe(false);
		// Placement passes a drained member though it has the most free slots.
		await run("set box1 --max 8");
		const limits = readLimits(store);
		const drained = new Set(["box1", "box2"].filter((name) => limits.configs.get(name)?.drained === true));
		expect(drained).toEqual(new Set(["box1"]));
		expect(claimMemberSlot(store, ["box1", "box2"], limits.targets, owner, undefined, drained)?.member).toBe("box2");
		// A pool whose members are all drained places nothing: its run waits.
		await run("drain box2");
		const pooled = queuedRun(store, "p1", "build");
		expect(pumpQueue(store, { maxConcurrent: 1, node: process.execPath, env: process.env })).toEqual({ started: [] });
		expect(claimed(pooled)).toBe(false);
		// Undrained (on a board with nothing queued: a run placed now would start its link).
		const other = await board();
		await other.run("drain box1");
		expect(await other.run("undrain box1")).toBe("box1 takes runs again");
		expect(readBoardConfig(other.store).targets.box1?.drained).toBeUndefined();
		expect(formatTargets(await other.service.targets.list())).toMatch(/^box1\s.*\sok$/m);
		await expect(run("drain nowhere")).rejects.toThrow(/unknown target nowhere/);
	});
});

describe("targets health", () => {
	it("a member failing its last check is not ok though its link heard it since; unreachable says since when", async () => {
		const { store, service, run } = await board();
		mkdirSync(join(store, "targets", "box1", "link"), { recursive: true });
		const checkedAt = new Date(2026, 0, 1, 9, 5, 7).getTime();
		writeFileSync(
			join(store, "targets", "box1", "link", "check.json"),
			JSON.stringify({ at: checkedAt, ok: false, failing: "pi: not found on the PATH" }),
		);
		writeHealth(store, "box1", { at: Date.now(), reachable: true });
		const since = new Date(2026, 0, 1, 10, 11, 12).getTime();
		writeHealth(store, "box2", { at: since + 5000, reachable: false, since, reason: "ssh: Connection refused" });
		const text = formatTargets(await service.targets.list());
		expect(text).toMatch(/^box1\s.*\sfailing its check at 09:05:07: pi: not found on the PATH$/m);
		expect(text).toMatch(/^box2\s.*\sunreachable since 10:11:12: ssh: Connection refused$/m);
		expect(text).toMatch(/^build\s.*\sok$/m);
		await run("drain box2");
		expect(formatTargets(await service.targets.list())).toMatch(
			/^box2\s.*\sdrained \(takes nothing new\); unreachable since 10:11:12: ssh: Connection refused$/m,
		);
	});
});
