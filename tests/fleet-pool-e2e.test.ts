/**
 * A pool of three loopback hosts (three Unix users, each behind its own sshd with the default limits)
 * through the board, with real pi workers on the hosts: a burst of 12 runs is placed by free slots (the
 * hosts' own process tables never show more far runners than a member's limit), the rest wait in the
 * pool's queue and run as slots free; a member whose sshd is stopped takes nothing new while its running
 * row goes on there and resumes, every event once, when the host comes back; `targets` shows each
 * member's running, queued, limit, load and whether it takes runs.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { formatTargets } from "../src/board/subcommands/targets-command.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import {
	hostRuns,
	sampleEvery,
	sessionLog,
	startFleet,
	stopFleet,
	type FleetHost,
} from "../test-support/fleet-hosts.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, type ModelServer } from "../test-support/model-server.ts";
import { PI_CLI, waitFor } from "../test-support/pi-harness.ts";
import { requires, sshdMissing } from "../test-support/requires.ts";
import { sharedScratchRoot } from "../test-support/shared-scratch.ts";

const missing = sshdMissing();
const LIMITS = { h1: 1, h2: 2, h3: 3 } as const;
let fleet: FleetHost[] = [];
let model: ModelServer;
let root: string;
let repo: string;
let board: BoardEngine;
/** Files that let a waiting row's bash tool finish: <release>-<row id>. */
let release: string;

beforeAll(async () => {
	if (missing) return;
	root = mkdtempSync(join(tmpdir(), "pab-pool-"));
	release = join(sharedScratchRoot(), `pab-pool-release-${process.pid}`);
	model = await startModelServer();
	repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
	board = createBoardService({
		storeDir: join(root, "store"),
		piCommand: [process.execPath, PI_CLI],
		maxConcurrent: 8,
		env: { ...process.env },
	});
	fleet = await startFleet(board, model, Object.keys(LIMITS), Object.values(LIMITS));
	await board.targets.add("build", { kind: "pool", members: "h1,h2,h3" });
}, 300_000);

afterAll(async () => {
	if (missing) return;
	await stopFleet(fleet);
	await model?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

const hostOf = (name: string) => fleet.find((f) => f.name === name)?.host;
/** The runs a host's own process table shows running there (its far runners, one per run). */
const runsOn = (name: string): string[] => {
	const host = hostOf(name);
	return host ? hostRuns(host) : [];
};
const runners = (name: string) => runsOn(name).length;
const farEvents = (name: string, row: BoardRow) =>
	join(
		hostOf(name)?.user.home ?? "",
		".agent-board",
		"store",
		"rows",
		row.id,
		"runs",
		row.currentRunId ?? "",
		"events.jsonl",
	);

/** What a wait that timed out saw: each row (state, host, owner, words), each member's link log and runs. */
async function seen(ids: string[]): Promise<string> {
	const now = await Promise.all(ids.map((id) => board.get(id)));
	const rowsText = now
		.map((row) =>
			row
				? `${row.id} ${row.state} on ${row.host ?? "-"}${row.alive ? "" : " (no owner)"}: ${row.error ?? row.summary ?? ""}`
				: "gone",
		)
		.join("; ");
	const links = Object.keys(LIMITS).map((name) => {
		let log = "none";
		try {
			log = readFileSync(join(root, "store", "targets", name, "link", "link.log"), "utf8")
				.split("\n")
				.slice(-15)
				.join("\n");
		} catch {
			// No link has run for it.
		}
		return `${name} runs there: ${runsOn(name).length}; its link log:\n${log}`;
	});
	return `rows: ${rowsText}\n${links.join("\n")}`;
}

/** Reads rows the way the board's tick does (the supervise step first: it pumps the queue). */
async function rows(ids: string[]): Promise<BoardRow[]> {
	await board.supervise();
	const all = await Promise.all(ids.map((id) => board.get(id)));
	return all.filter((row): row is BoardRow => row !== undefined);
}

describe("a pool of three hosts", () => {
	it("places a burst of 12 by free slots, never over a member's limit on the hosts themselves, and runs the rest as slots free", async (ctx) => {
		requires(ctx, "sshd and Unix users for three hosts", missing);
		model.setScript({
			rules: [
				{
					match: "POOL-BURST",
					steps: [
						{ toolCall: { name: "bash", args: { command: "sleep 1; echo placed" } } },
						{ text: "Done in the pool." },
					],
				},
			],
		});
		const samples = sampleEvery(200, () =>
			Object.fromEntries(Object.keys(LIMITS).map((name) => [name, runsOn(name)])),
		);
		// Held at the model: the first six stay running until all twelve are dispatched.
		const go = model.hold();
		const dispatched: BoardRow[] = [];
		for (let i = 0; i < 12; i++)
			dispatched.push(await board.dispatch({ prompt: `POOL-BURST ${i}`, cwd: repo, target: "build" }));
		const ids = dispatched.map((row) => row.id);
		const asking = () => model.requests().filter((r) => r.prompt.startsWith("POOL-BURST")).length;
		let diagnosis = "";
		await waitFor(
			async () => {
				if (asking() >= 6) return true;
				// The board's tick meanwhile: a run a member could not start went back to the pool's queue, and
				// the supervise step places it again (that member takes nothing for a minute).
				await rows(ids);
				diagnosis = await seen(ids);
				return undefined;
			},
			() => `six workers asking the model (${asking()} asked); ${diagnosis}`,
			180_000,
			500,
		);
		const placed = await waitFor(
			async () => {
				const now = await rows(ids);
				const running = now.filter((row) => row.host && row.state !== "queued");
				return running.length === 6 ? now : undefined;
			},
			"six rows placed on the pool's members",
			60_000,
		);
		const onHost = (name: string) => placed.filter((row) => row.host === name && row.state !== "queued").length;
		expect({ h1: onHost("h1"), h2: onHost("h2"), h3: onHost("h3") }).toEqual(LIMITS);
		expect(placed.filter((row) => row.state === "queued")).toHaveLength(6);
		// The hosts' own process tables agree: one far runner per slot.
		await waitFor(
			() => runners("h1") === 1 && runners("h2") === 2 && runners("h3") === 3,
			"the far runners on the hosts",
		);
		const view = await board.targets.list();
		expect(view.find((t) => t.name === "build")).toMatchObject({
			members: ["h1", "h2", "h3"],
			max: 6,
			running: 6,
			queued: 6,
		});
		for (const [name, max] of Object.entries(LIMITS)) {
			expect(view.find((t) => t.name === name)).toMatchObject({
				max,
				running: max,
				queued: 0,
				takes: { ok: false, why: "full" },
				load: { cpus: expect.any(Number) },
			});
		}
		expect(formatTargets(view)).toMatch(/^build\s+pool of h1, h2, h3\s+6\/6\s+6\s+-\s+ok$/m);
		go();

		const done = await Promise.all(
			ids.map((id) =>
				waitFor(
					async () => ((await rows([id]))[0]?.state === "completed" ? await board.get(id) : undefined),
					`row ${id} to complete`,
					240_000,
				),
			),
		);
		const perHost = samples.stop();
		for (const [name, max] of Object.entries(LIMITS)) {
			const busiest = perHost
				.map((sample) => sample[name] ?? [])
				.reduce((most, runs) => (runs.length > most.length ? runs : most), []);
			expect(busiest.length, `${name} ran ${busiest.join(", ")} at once`).toBeLessThanOrEqual(max);
		}
		for (const row of done) {
			expect(row).toMatchObject({ state: "completed", target: "build", latestAssistant: "Done in the pool." });
			expect(Object.keys(LIMITS)).toContain(row.host);
		}
		// Every host took runs; none of its sshd's sessions was refused (one channel and git's on one connection).
		for (const name of Object.keys(LIMITS)) {
			expect(done.filter((row) => row.host === name).length).toBeGreaterThan(0);
			const log = sessionLog(hostOf(name) ?? fleet[0]!.host);
			expect(log.refused).toBe(0);
			expect(log.maxSessions).toBeLessThanOrEqual(3);
		}
	}, 600_000);

	it("a member whose sshd is stopped takes nothing new; its running row goes on there and resumes, every event once, when it is back", async (ctx) => {
		requires(ctx, "sshd and Unix users for three hosts", missing);
		model.setScript({
			rules: [
				{
					match: "POOL-WAIT",
					steps: [
						{
							toolCall: {
								name: "bash",
								args: {
									command: `while [ ! -e ${release}-$AGENT_BOARD_ROW ]; do sleep 0.2; done; echo released`,
								},
							},
						},
						{ text: "Released." },
					],
				},
			],
		});
		// A row on h3 (directly: it has two slots left, the most in the pool).
		const away = await board.dispatch({ prompt: "POOL-WAIT on h3", cwd: repo, target: "h3" });
		let diagnosis = "";
		await waitFor(
			async () => {
				if ((await rows([away.id]))[0]?.live?.tool?.name === "bash") return true;
				diagnosis = await seen([away.id]);
				return undefined;
			},
			() => `h3's row to run its tool; ${diagnosis}`,
			120_000,
			500,
		);
		await hostOf("h3")?.stop();
		const cut = await waitFor(
			async () => ((await rows([away.id]))[0]?.unreachable ? (await rows([away.id]))[0] : undefined),
			"h3's row shown unreachable",
			60_000,
		);
		expect(cut).toMatchObject({ state: "working", alive: true, host: "h3" });
		await waitFor(
			async () => (await board.targets.list()).find((t) => t.name === "h3")?.takes?.ok === false,
			"h3 taking nothing",
			60_000,
		);
		expect((await board.targets.list()).find((t) => t.name === "h3")?.takes?.why).toMatch(/^unreachable: /);

		// Four more for the pool: h1 and h2 have three slots between them; h3's two stay empty.
		const more: BoardRow[] = [];
		for (let i = 0; i < 4; i++)
			more.push(await board.dispatch({ prompt: `POOL-WAIT more ${i}`, cwd: repo, target: "build" }));
		const settled = await waitFor(
			async () => {
				const now = await rows(more.map((row) => row.id));
				return now.filter((row) => row.live?.tool?.name === "bash").length === 3 ? now : undefined;
			},
			"three of them running on h1 and h2",
			180_000,
		);
		expect(
			settled
				.filter((row) => row.live?.tool?.name === "bash")
				.map((row) => row.host)
				.sort(),
		).toEqual(["h1", "h2", "h2"]);
		const waiting = settled.find((row) => row.state === "queued");
		expect(waiting).toBeDefined();
		expect(runners("h3")).toBe(1);

		// h3 comes back: its row resumes, and the pool's waiting row goes there.
		await hostOf("h3")?.start();
		await waitFor(async () => (await rows([away.id]))[0]?.unreachable === undefined, "h3's row back", 120_000);
		const placedBack = await waitFor(
			async () => {
				const row = (await rows([waiting?.id ?? ""]))[0];
				return row?.live?.tool?.name === "bash" ? row : undefined;
			},
			"the waiting row placed on h3",
			180_000,
		);
		expect(placedBack.host).toBe("h3");
		for (const row of [away, ...more]) writeFileSync(`${release}-${row.id}`, "");
		const finished = await Promise.all([away, ...more].map((row) => waitDone(board, row.id, 180_000)));
		for (const row of finished) expect(row).toMatchObject({ state: "completed", latestAssistant: "Released." });
		// Every event of the row that lived through the outage came back once, in order, as the host has them.
		const local = readFileSync(join(finished[0]?.runDir ?? "", "events.jsonl"), "utf8");
		expect(local).toBe(readFileSync(farEvents("h3", finished[0]!), "utf8"));
		const seqs = local
			.split("\n")
			.filter(Boolean)
			.map((line) => (JSON.parse(line) as { seq: number }).seq);
		expect(seqs).toEqual(seqs.map((_, i) => i + 1));
		for (const row of [away, ...more]) rmSync(`${release}-${row.id}`, { force: true });
		expect(existsSync(`${release}-${away.id}`)).toBe(false);
	}, 600_000);
});
