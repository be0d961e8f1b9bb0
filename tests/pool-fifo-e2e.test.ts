/**
 * FIFO across boards on one pool: two boards of their own (two processes on one store, as two pi
 * sessions would be) dispatch to a pool of two members (a directory each, the fake kind) at once, each
 * ticking as an open board does, with the store's keeper pumping too; real pi workers run every row at
 * the far side. No entry of the pool starts while an older one waits: each run's claim, made under the
 * queue's lock, counts the older entries of its target still waiting (0 in FIFO), and the order the
 * runs were claimed in is the order they were queued in. A run a member hands back (it could not be
 * launched there) keeps its place: it starts before the runs queued after it (it went to the back).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBoardService } from "../src/board/engine/service.ts";
import { parseSubcommand, runSubcommand } from "../src/board/subcommands/subcommands.ts";
import "../test-support/fake-kind/register.mjs";
import { initRepo } from "../test-support/git-repo.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, PI_CLI, REPO_ROOT, type TestAgent, waitFor } from "../test-support/pi-harness.ts";

const REGISTER = join(REPO_ROOT, "test-support", "fake-kind", "register.mjs");
const CHILD = join(REPO_ROOT, "test-support", "pool-board-child.ts");
const agents: TestAgent[] = [];
const dirs: string[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** A board process of its own: dispatches `count` rows to `target`, ticks until they are over, prints their ids. */
function boardProcess(
	env: NodeJS.ProcessEnv,
	storeDir: string,
	count: number,
	target: string,
	cwd: string,
	tag: string,
) {
	return new Promise<string[]>((resolve, reject) => {
		const child = spawn(
			process.execPath,
			["--experimental-strip-types", "--no-warnings", CHILD, storeDir, String(count), target, cwd, tag],
			{ env, stdio: ["ignore", "pipe", "pipe"] },
		);
		let out = "";
		let err = "";
		child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
		child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
		child.on("close", (code) =>
			code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(`board ${tag} exited ${code}: ${err}`)),
		);
	});
}

interface Claim {
	purpose: string;
	at: number;
	olderWaiting?: number;
	queued?: { at: number; runId: string; target?: string };
}

describe("two boards on one pool", () => {
	it("start the pool's runs in the order they were queued: no younger entry starts while an older one waits", async () => {
		const agent = createTestAgent({
			script: {
				rules: [],
				fallback: [{ toolCall: { name: "ls", args: {} } }, { delayMs: 200, then: { text: "Slice finished." } }],
			},
		});
		agents.push(agent);
		const root = mkdtempSync(join(tmpdir(), "pab-pool-fifo-"));
		dirs.push(root);
		const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
		const storeDir = join(root, "store");
		const env = { ...agent.env, NODE_OPTIONS: `--import=${REGISTER}` };
		const board = createBoardService({ storeDir, piCommand: [process.execPath, PI_CLI], env });
		const run = async (args: string): Promise<string> => {
			const parsed = parseSubcommand(args);
			if (!parsed.ok) throw new Error(parsed.error);
			return runSubcommand(board, parsed, repo);
		};
		const pi = `--pi "${process.execPath} ${PI_CLI}"`;
		await run(`targets add m1 --fake ${join(root, "far1")} ${pi} --max 1`);
		await run(`targets add m2 --fake ${join(root, "far2")} ${pi} --max 1`);
		await run("targets add build --pool m1,m2");

		const PER_BOARD = 5;
		const ids = (
			await Promise.all(["east", "west"].map((tag) => boardProcess(env, storeDir, PER_BOARD, "build", repo, tag)))
		).flat();
		expect(new Set(ids).size).toBe(2 * PER_BOARD);

		const rows = await Promise.all(ids.map((id) => board.get(id)));
		expect(rows.map((row) => `${row?.name}: ${row?.state} ${row?.error ?? ""}`.trim())).toEqual(
			rows.map((row) => `${row?.name}: completed`),
		);
		// Each run was claimed once, to start, from the pool's queue, and both members took runs.
		const claims = rows.map((row) => ({
			row: row?.name ?? "",
			host: row?.host,
			claim: JSON.parse(readFileSync(join(row?.runDir ?? "", "claim.json"), "utf8")) as Claim,
		}));
		expect(claims.filter(({ claim }) => claim.purpose !== "start" || claim.queued?.target !== "build")).toEqual([]);
		expect(new Set(claims.map(({ host }) => host))).toEqual(new Set(["m1", "m2"]));
		const byPlace = [...claims].sort((a, b) => (a.claim.queued?.at ?? 0) - (b.claim.queued?.at ?? 0));
		// FIFO: when a run was claimed, no older entry of the pool still waited; so claims follow queue order.
		expect(
			claims
				.filter(({ claim }) => claim.olderWaiting !== 0)
				.map(({ row, claim }) => `${row}: ${claim.olderWaiting}`),
		).toEqual([]);
		const byClaim = [...claims].sort(
			(a, b) => a.claim.at - b.claim.at || (a.claim.queued?.at ?? 0) - (b.claim.queued?.at ?? 0),
		);
		expect(byClaim.map(({ row }) => row)).toEqual(byPlace.map(({ row }) => row));
	}, 600_000);

	it("a run a member could not start goes back in its place: it starts before the runs queued after it", async () => {
		const agent = createTestAgent({});
		agents.push(agent);
		const gate = join(agent.root, "gate");
		agent.writeScript({
			rules: [{ match: "HOLD", steps: [{ waitForFile: gate, then: { text: "Held, done." } }] }],
			fallback: [{ text: "Done." }],
		});
		const root = mkdtempSync(join(tmpdir(), "pab-pool-back-"));
		dirs.push(root);
		const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
		const storeDir = join(root, "store");
		const env = { ...agent.env, NODE_OPTIONS: `--import=${REGISTER}` };
		const board = createBoardService({ storeDir, piCommand: [process.execPath, PI_CLI], env });
		const run = async (args: string): Promise<string> => {
			const parsed = parseSubcommand(args);
			if (!parsed.ok) throw new Error(parsed.error);
			return runSubcommand(board, parsed, repo);
		};
		const pi = `--pi "${process.execPath} ${PI_CLI}"`;
		// broken's far side is a file where its directory should be: nothing can be launched there.
		const brokenDir = join(root, "broken-far");
		await run(`targets add good --fake ${join(root, "good-far")} ${pi} --max 1`);
		await run(`targets add broken --fake ${brokenDir} ${pi} --max 1`);
		writeFileSync(brokenDir, "not a directory\n");
		await run("targets add build --pool good,broken");

		const held = await board.dispatch({ prompt: "HOLD the good member", cwd: repo, target: "build" });
		await waitFor(
			async () => (await board.get(held.id))?.host === "good",
			"the first run to be placed on the good member",
			120_000,
		);
		// Two more wait while broken takes nothing (drained); then broken takes the older, and hands it back.
		await run("targets drain broken");
		const first = await board.dispatch({ prompt: "first after", cwd: repo, target: "build" });
		const second = await board.dispatch({ prompt: "second after", cwd: repo, target: "build" });
		expect([(await board.get(first.id))?.state, (await board.get(second.id))?.state]).toEqual(["queued", "queued"]);
		const firstDir = String((await board.get(first.id))?.runDir);
		await run("targets undrain broken");
		await waitFor(
			async () => {
				await board.supervise?.();
				return existsSync(join(firstDir, "placements.json"));
			},
			"the broken member to hand the first run back",
			120_000,
		);
		writeFileSync(gate, "");
		const done = await Promise.all([held, first, second].map((row) => waitDone(board, row.id, 180_000)));
		expect(done.map((row) => `${row.state} on ${row.host}`)).toEqual([
			"completed on good",
			"completed on good",
			"completed on good",
		]);
		const claimOf = (row: { runDir?: string }) =>
			JSON.parse(readFileSync(join(row.runDir ?? "", "claim.json"), "utf8")) as Claim;
		const [, firstClaim, secondClaim] = done.map(claimOf);
		// The first kept its place (queued before the second, claimed before it, with nothing older waiting).
		expect(firstClaim?.queued?.at).toBeLessThan(secondClaim?.queued?.at ?? 0);
		expect([firstClaim?.olderWaiting, secondClaim?.olderWaiting]).toEqual([0, 0]);
		expect(firstClaim?.at).toBeLessThanOrEqual(secondClaim?.at ?? 0);
		// broken was tried by the first only: failing a launch, it took nothing more.
		expect(existsSync(join(String(done[2]?.runDir), "placements.json"))).toBe(false);
	}, 600_000);
});
