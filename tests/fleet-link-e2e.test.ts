/**
 * One link for every row of a host: ten rows on one loopback host (its own Unix user behind its own
 * sshd, default limits) are owned here by one process and carried by one ssh connection within three
 * sessions; a steer and a stop reach only their row; the link killed mid-run is started again by the
 * next board read and resumes all ten, and no row loses or repeats an event (each local events.jsonl is
 * the host's, byte for byte) or a byte of its session.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { processesMentioning, sessionLog, startFleet, stopFleet, type FleetHost } from "../test-support/fleet-hosts.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, type ModelServer } from "../test-support/model-server.ts";
import { PI_CLI, waitFor } from "../test-support/pi-harness.ts";
import { requires, sshdMissing } from "../test-support/requires.ts";
import { sharedScratchRoot } from "../test-support/shared-scratch.ts";

const missing = sshdMissing();
let fleet: FleetHost[] = [];
let model: ModelServer;
let root: string;
let store: string;
let repo: string;
let board: BoardEngine;
let release: string;

beforeAll(async () => {
	if (missing) return;
	root = mkdtempSync(join(tmpdir(), "pab-onelink-"));
	store = join(root, "store");
	release = join(sharedScratchRoot(), `pab-onelink-release-${process.pid}`);
	model = await startModelServer({ chunkDelayMs: 40 });
	repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
	board = createBoardService({
		storeDir: store,
		piCommand: [process.execPath, PI_CLI],
		maxConcurrent: 4,
		env: { ...process.env },
	});
	fleet = await startFleet(board, model, ["one"], 10);
}, 300_000);

afterAll(async () => {
	if (missing) return;
	await stopFleet(fleet);
	await model?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

const host = () => fleet[0]!.host;
const farRun = (row: BoardRow) =>
	join(host().user.home, ".agent-board", "store", "rows", row.id, "runs", row.currentRunId ?? "");
const linkLog = () => {
	try {
		return readFileSync(join(store, "targets", "one", "link", "link.log"), "utf8")
			.split("\n")
			.slice(-30)
			.join("\n");
	} catch {
		return "none";
	}
};
const linkOf = (row: BoardRow) =>
	(JSON.parse(readFileSync(join(row.runDir ?? "", "runner.json"), "utf8")) as { pid: number }).pid;

async function rowsNow(ids: string[]): Promise<BoardRow[]> {
	await board.supervise();
	return (await Promise.all(ids.map((id) => board.get(id)))).filter((row): row is BoardRow => row !== undefined);
}

describe("one link for ten rows on a host", () => {
	it("owns them in one process over one connection within three sessions, steers and stops one row only, and a killed link loses and repeats nothing", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const words = Array.from({ length: 30 }, (_, n) => `w${n}`).join(" ");
		// Each row's tool waits for its own file (the worker's environment names its row).
		model.setScript({
			rules: [
				{ match: "STEER-ONE", steps: [{ text: "Steered." }] },
				{
					match: "ONE-LINK",
					steps: [
						{
							toolCall: {
								name: "bash",
								args: {
									command: `while [ ! -e ${release}-$AGENT_BOARD_ROW ]; do echo tick; sleep 0.3; done; echo released`,
								},
							},
						},
						{ text: `Finished ${words} end.` },
					],
				},
			],
		});
		// Ten attempts of one prompt: a burst larger than 8 (the target's limit is 10).
		const set = await board.dispatchAttempts({ prompt: "ONE-LINK work", cwd: repo, target: "one", count: 10 });
		expect(set).toHaveLength(10);
		const ids = set.map((row) => row.id);
		const free = (i: number) => writeFileSync(`${release}-${ids[i]}`, "");
		let seen: BoardRow[] = [];
		const running = await waitFor(
			async () => {
				seen = await rowsNow(ids);
				// A row that failed ends the wait at once: it would never reach its tool.
				return seen.filter((row) => row.live?.tool?.name === "bash").length === 10 ||
					seen.some((row) => row.state === "failed")
					? seen
					: undefined;
			},
			() =>
				`all ten rows in their tool on the host (${seen.map((row) => `${row.state}${row.alive ? "" : " (no owner)"} ${row.live?.tool?.name ?? ""} ${row.error ?? row.summary}`).join("; ")}; link log: ${linkLog()})`,
			300_000,
		);
		expect(
			running.filter((row) => row.state === "failed").map((row) => `${row.id}: ${row.error}`),
			`link log: ${linkLog()}`,
		).toEqual([]);

		// One process owns all ten (every runner.json names it), and it is the only link of this store.
		const link = linkOf(running[0]!);
		expect(new Set(running.map(linkOf))).toEqual(new Set([link]));
		expect(processesMentioning(join(store, "targets"))).toContain(link);
		expect(processesMentioning(`target-link.mjs\0${join(store, "targets", "one", "link")}`)).toEqual([link]);
		const before = sessionLog(host());
		expect(before.refused).toBe(0);
		expect(before.maxSessions).toBeLessThanOrEqual(3);

		// A steer reaches its row only.
		const steered = await board.reply(ids[2]!, "STEER-ONE only this row", { receiptTimeoutMs: 60_000 });
		expect(steered.delivery).toBe("steer");
		// The receipt file answers the reply; the row lists it once the far status that carries it is mirrored.
		const receiptsOf = async (id: string) => (await board.get(id))?.receipts?.map((r) => [r.status, r.as]) ?? [];
		await waitFor(
			async () => ((await receiptsOf(ids[2]!)).length > 0 ? true : undefined),
			"the steered row to list its receipt",
		);
		expect(await receiptsOf(ids[2]!)).toEqual([["delivered", "steer"]]);
		const others = await rowsNow(ids.filter((_, i) => i !== 2));
		for (const row of others) expect(row.receipts ?? []).toEqual([]);

		// The link dies mid-run; half the rows go on there and finish their tool meanwhile.
		process.kill(link, "SIGKILL");
		await waitFor(() => {
			try {
				return readFileSync(`/proc/${link}/stat`, "utf8").includes(") Z ");
			} catch {
				return true;
			}
		}, "the link to die");
		for (let i = 0; i < 5; i++) free(i);
		// Their tool's end reaches the model from the host (a request with the tool's result), with no link here.
		// (The steered row's asks with its steer as the latest user message.)
		const afterTool = () => model.requests().filter((r) => r.messages.some((m) => m.role === "tool")).length;
		await waitFor(
			() => (afterTool() >= 5 ? true : undefined),
			"five rows to go on at the host without a link",
			120_000,
		);
		// The next board read starts one new link, which takes over all ten.
		const relinked = await waitFor(
			async () => {
				const now = await rowsNow(ids);
				const pids = new Set(
					now
						.filter((row) => row.alive || row.state === "completed")
						.map((row) => (row.state === "completed" ? 0 : linkOf(row))),
				);
				pids.delete(0);
				return pids.size === 1 && !pids.has(link) ? now : undefined;
			},
			"one new link for the rows",
			120_000,
		);
		expect(relinked.every((row) => row.state !== "failed")).toBe(true);

		// A stop reaches its row only; the rest finish. Its end may come after the stop's own wait (its grace,
		// twice, and 8 s) on a loaded machine: the row's end is checked below, with the others'.
		const stopped = await board.stop(ids[9]!);
		expect(["stopped", "working"]).toContain(stopped.state);
		for (let i = 5; i < 9; i++) free(i);
		const done = await Promise.all(ids.map((id) => waitDone(board, id, 300_000)));
		expect(done.map((row) => row.state)).toEqual([...Array(9).fill("completed"), "stopped"]);
		// The steered row answered its steer after its tool; the others finished their task.
		done.slice(0, 9).forEach((row, i) => {
			expect(row.latestAssistant).toContain(i === 2 ? "Steered." : "end.");
		});

		// Every row's events and session came back once, in order, exactly as the host has them.
		for (const row of done) {
			const local = readFileSync(join(row.runDir ?? "", "events.jsonl"), "utf8");
			expect(local).toBe(readFileSync(join(farRun(row), "events.jsonl"), "utf8"));
			const seqs = local
				.split("\n")
				.filter(Boolean)
				.map((line) => (JSON.parse(line) as { seq: number }).seq);
			expect(seqs).toEqual(seqs.map((_, i) => i + 1));
			expect(
				readFileSync(row.sessionFile).equals(
					readFileSync(join(host().user.home, ".agent-board", "store", "sessions", row.id, `${row.id}.jsonl`)),
				),
			).toBe(true);
		}
		const after = sessionLog(host());
		expect(after.refused).toBe(0);
		expect(after.maxSessions).toBeLessThanOrEqual(3);
		for (const id of ids) rmSync(`${release}-${id}`, { force: true });
	}, 900_000);
});
