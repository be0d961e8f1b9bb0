/**
 * Targets in the dashboard, on the fake service at a width: the new-agent form's `where` (remembered,
 * forcing a worktree, a refusal kept in the form with the engine's reason), the list's target column
 * only when some row runs elsewhere, peek's target and unreachable lines, `on:` in the filter, and a
 * concurrency limit per target in settings written through the engine's API.
 */
import { describe, expect, it } from "vitest";
import { DispatchOptionsView } from "../src/board/dashboard/dispatch-options.ts";
import { DispatchView } from "../src/board/dashboard/dispatch-view.ts";
import { ListView } from "../src/board/dashboard/list-view.ts";
import { SettingsView } from "../src/board/dashboard/settings-view.ts";
import { type DashboardHarness, harnessPerTest } from "../test-support/dashboard-harness.ts";
import { flushReports, KEY, makeRow } from "../test-support/fake-board-service.ts";

const harness = harnessPerTest();

const type = (text: string): string[] => [...text];
const CTRL_O = "\x0f";
const dispatched = (h: DashboardHarness) => h.board.calls.filter((c) => c.method === "dispatch").map((c) => c.args[0]);
const since = new Date(2024, 0, 2, 9, 41, 0).getTime();

const localRows = () => [
	makeRow({ id: "l1", name: "local work", state: "completed" }),
	makeRow({ id: "l2", name: "local busy", state: "working", alive: true }),
];
const remoteRows = () => [
	makeRow({
		id: "d1",
		name: "dev work",
		state: "working",
		alive: true,
		target: "dev",
		live: { waitingSince: Date.now() - 3000 },
	}),
	makeRow({
		id: "u1",
		name: "cut off",
		state: "working",
		alive: true,
		target: "dev",
		summary: "unreachable",
		unreachable: { since, reason: "ssh: connect to host dev port 22: Connection refused\x1b[2J\u202e" },
	}),
];

describe("targets in the dashboard", () => {
	it("the form's where lists local and the targets; a target forces a worktree, is sent and remembered", async () => {
		const h = await harness(localRows(), {
			targetNames: () => ["dev", "box"],
			prefs: { cwd: "/tmp/repo", worktreeMode: "none" },
		});
		await h.press("n");
		expect(h.screen()).toContain("in /tmp/repo · local · pi's default model · no worktree · 1 attempt");
		await h.press(...type("build it"), CTRL_O);
		expect(h.top()).toBeInstanceOf(DispatchOptionsView);
		expect(h.screen()).toMatch(/where\s+local/);
		// name, cwd, where: enter cycles local -> dev.
		await h.press(KEY.down, KEY.down, KEY.enter);
		expect(h.screen()).toMatch(/where\s+dev/);
		expect(h.screen()).toContain("a target always runs the agent in its own worktree");
		expect(h.screen(200)).toContain(
			"in /tmp/repo · on dev · pi's default model · own worktree (always, on a target) · 1 attempt",
		);
		await h.press(KEY.esc);
		expect(h.top()).toBeInstanceOf(DispatchView);
		expect(h.screen()).toContain("on dev · pi's default model · own worktree (always, on a target)");
		await h.press(KEY.enter);
		await flushReports();
		expect(dispatched(h)).toEqual([{ prompt: "build it", cwd: "/tmp/repo", worktreeMode: "none", target: "dev" }]);
		expect(h.saved.at(-1)).toMatchObject({ target: "dev", cwd: "/tmp/repo" });
		// Remembered: the next form starts on dev; a target removed since falls back to local.
		await h.press("n");
		expect(h.screen()).toContain("in /tmp/repo · on dev ·");
		const gone = await harness(localRows(), { targetNames: () => ["box"], prefs: { target: "dev" } });
		await gone.press("n");
		expect(gone.screen()).toMatch(/in \/tmp\/here · local ·/);
	});

	it("a refused dispatch stays in the form with the engine's reason and the prompt; a bad config still offers local", async () => {
		const reason = "running on dev (code travels there by git) needs a git repository: /tmp/here is not one";
		const h = await harness(localRows(), { targetNames: () => ["dev"], prefs: { target: "dev" } });
		h.board.dispatchAttempts = async () => {
			throw new Error(reason);
		};
		await h.press("n", ...type("do it"), KEY.enter);
		await flushReports();
		expect(h.top()).toBeInstanceOf(DispatchView);
		expect(h.screen()).toContain(`not started: ${reason}`);
		expect((h.top() as DispatchView).editor.getText()).toBe("do it");
		const bad = await harness(localRows(), {
			targetNames: () => {
				throw new Error("/tmp/fake-board/config.json: /targets/x/kind must be ssh or container");
			},
		});
		await bad.press("n");
		expect(bad.screen()).toContain("targets unavailable: /tmp/fake-board/config.json: /targets/x/kind");
		expect(bad.screen()).toContain("· local ·");
	});

	it("the list shows where rows run only when some row runs elsewhere; an unreachable row is not failed", async () => {
		const plain = await harness(localRows());
		expect(plain.screen()).not.toContain("on local");
		const h = await harness([...localRows(), ...remoteRows()]);
		const screen = h.screen(160);
		expect(screen).toMatch(/local work .* on local/);
		expect(screen).toMatch(/dev work .* on dev/);
		const cut = screen.split("\n").find((line) => line.includes("cut off")) ?? "";
		expect(cut).toMatch(/^ [ *]> cut off/);
		expect(cut).toContain("unreachable since 09:41: ssh: connect to host dev port 22: Connection refused");
		expect(screen).not.toMatch(/\x1b|\u202e/);
		expect(screen).toMatch(/Agent board 4 rows · 3 running/);
		expect(screen).not.toContain("Failed");
	});

	it("peek shows the target and why it cannot be reached; / on:<target> narrows the list", async () => {
		const h = await harness([...localRows(), ...remoteRows()]);
		await h.press("/", ...type("on:dev s:work cut"), KEY.enter);
		expect(h.dash.list.model.rows().map((row) => row.id)).toEqual(["u1"]);
		await h.press(KEY.enter);
		expect(h.screen()).toMatch(/target\s+dev/);
		expect(h.screen()).toMatch(
			/link\s+unreachable since 09:41: ssh: connect to host dev port 22: Connection refused/,
		);
		await h.press(KEY.esc, KEY.esc, "/", ...type("on:local"), KEY.enter);
		expect(
			h.dash.list.model
				.rows()
				.map((row) => row.id)
				.sort(),
		).toEqual(["l1", "l2"]);
		await h.press(KEY.esc, "?");
		expect(h.screen()).toContain("on:<target>");
	});

	it("settings has a limit per target, written through the engine's setLimit; a refused one shows what holds", async () => {
		const h = await harness(localRows());
		h.board.targets.list = async () => [
			{ name: "local", kind: "local", where: "this machine", max: 1, running: 1, queued: 1 },
			{ name: "dev", kind: "ssh", where: "ssh dev (dir .agent-board)", max: 20, running: 0, queued: 0 },
		];
		await h.press("S");
		expect(h.top()).toBeInstanceOf(SettingsView);
		expect(h.screen()).toMatch(/local: runs at a time\s+1/);
		expect(h.screen()).toMatch(/dev: runs at a time\s+20/);
		await h.press(KEY.down, KEY.down, KEY.down, KEY.enter);
		await flushReports();
		expect(h.board.calls.filter((c) => c.method === "targets.setLimit").map((c) => c.args)).toEqual([["local", 2]]);
		expect(h.screen()).toMatch(/local: runs at a time\s+2/);
		h.board.targets.setLimit = async () => {
			throw new Error("config.json is locked");
		};
		await h.press(KEY.enter);
		await flushReports();
		expect(h.screen()).toMatch(/local: runs at a time\s+2/);
		expect(h.screen()).toContain("local: runs at a time: config.json is locked");
		await h.press(KEY.esc);
		expect(h.top()).toBeInstanceOf(ListView);
	});
});
