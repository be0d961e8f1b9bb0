/**
 * A full disk here at a remote run's end loses none of its work (#38): the run ends on the ssh host
 * (sshd on 127.0.0.1, a second Unix user), and its fetch-back into the user's repository (on a small
 * tmpfs filled to the last byte) cannot write. The row stays working, says it waits for space, and when
 * space returns its work comes back and it completes. Before, the row failed "work not fetched".
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowWhere, waitDone } from "../test-support/board-helpers.ts";
import { fillDisk } from "../test-support/fill-disk.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import { commandFails, notRoot, requires, sshdMissing } from "../test-support/requires.ts";
import { startSshBoard, type SshBoard } from "../test-support/ssh-board.ts";

const missing = sshdMissing();
let fixture: SshBoard | undefined;
const mounts: string[] = [];

beforeAll(async () => {
	if (missing) return;
	fixture = await startSshBoard("pab-fetch-disk-");
}, 180_000);

afterAll(async () => {
	for (const mount of mounts) commandFails("umount", ["-l", mount]);
	await fixture?.cleanup();
});

describe("a full disk at a remote run's fetch-back", () => {
	it("holds the row 'waiting for space' and brings the work back when space returns", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		requires(ctx, "root (mounting a small tmpfs)", notRoot());
		const { board, model, local } = fixture as SshBoard;
		const small = join(local, "small");
		mkdirSync(small, { mode: 0o700 });
		requires(
			ctx,
			"a tmpfs mount",
			commandFails("mount", ["-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", small]),
		);
		mounts.unshift(small);
		const repo = initRepo(join(small, "repo"), { "a.txt": "a\n" });
		const gate = join(tmpdir(), `pab-fetch-disk-gate-${process.pid}`);
		rmSync(gate, { force: true });
		model.setScript({
			rules: [
				{
					match: "FETCH-FULL",
					steps: [
						{
							waitForFile: gate,
							then: { toolCall: { name: "bash", args: { command: "echo FETCHED-WORK > fetched.txt" } } },
						},
						{ text: "Wrote it." },
					],
				},
			],
		});
		const row = await board.dispatch({ prompt: "FETCH-FULL", cwd: repo, target: "h" });
		// The far worker asked the model: the base went to the host already. Then the repository's disk fills.
		await waitFor(
			async () => model.requests().some((request) => JSON.stringify(request).includes("FETCH-FULL")),
			"the far worker's first request",
			120_000,
		);
		const fillers = fillDisk(small);
		writeFileSync(gate, "");
		const held = await rowWhere(
			board,
			row.id,
			"the row waiting for space to bring its work back",
			(current) => /Disk full: waiting for space/.test(current.summary ?? ""),
			120_000,
		);
		expect(held.state).toBe("working");
		expect(held.error ?? "").not.toMatch(/work not fetched/);
		for (const filler of fillers) rmSync(filler, { force: true });
		const done = await waitDone(board, row.id, 120_000);
		expect(done.error ?? "").toBe("");
		expect(done.state).toBe("completed");
		expect(readFileSync(join(done.worktreePath ?? "", "fetched.txt"), "utf8")).toBe("FETCHED-WORK\n");
		expect(existsSync(gate)).toBe(true);
		rmSync(gate, { force: true });
	}, 360_000);
});
