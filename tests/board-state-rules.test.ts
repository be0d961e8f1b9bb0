/** Pure state rules shared by the runner and the extension. */
import { describe, expect, it } from "vitest";
import {
	applyEvent,
	finalize,
	firstSentence,
	initialStatus,
	isTerminal,
	looksLikeQuestion,
	endFromOutside,
	summarize,
} from "../runner/life/state-rules.mjs";

const assistant = (text: string, extra: Record<string, unknown> = {}) => ({
	type: "message_end",
	message: { role: "assistant", content: [{ type: "text", text }], stopReason: "stop", ...extra },
});

describe("state rules", () => {
	it("moves queued -> working on the first worker event and prioritises the summary", () => {
		const status = initialStatus("run-1", "row-1", 1);
		expect(status.state).toBe("queued");
		expect(summarize(status)).toBe("Waiting for a free slot");
		applyEvent(status, { type: "session" }, 2);
		expect(status.state).toBe("queued");
		applyEvent(status, { type: "agent_start" }, 3);
		expect(status.state).toBe("working");
		applyEvent(status, assistant("Looking at the parser. Next the tests."), 4);
		expect(status.summary).toBe("Looking at the parser.");
		applyEvent(status, { type: "tool_execution_start", toolName: "bash", args: { command: "npm test\nmore" } }, 5);
		expect(status.summary).toBe("Running bash: npm test");
		applyEvent(status, { type: "tool_execution_end", toolName: "bash", isError: false }, 6);
		expect(status.summary).toBe("Looking at the parser.");
		status.modelSummary = "Model view";
		expect(summarize(status)).toBe("Model view");
	});

	it("derives terminal states from the way the run ended", () => {
		const settled = (
			events: Array<Record<string, unknown>>,
			exit: { code: number | null; signal: string | null; spawnError?: string; stopped?: boolean } = {
				code: 0,
				signal: null,
			},
		) => {
			const status = initialStatus("r", "w", 0);
			for (const event of [{ type: "agent_start" }, ...events]) applyEvent(status, event, 1);
			return finalize(status, { ...exit, now: 2 });
		};
		expect(settled([assistant("Done."), { type: "agent_settled" }]).state).toBe("completed");
		expect(settled([{ type: "agent_settled" }]).state).toBe("idle");
		expect(settled([assistant("Ok. Which option do you prefer"), { type: "agent_settled" }])).toMatchObject({
			state: "needs_input",
			questionSource: "heuristic",
		});
		expect(
			settled([
				{ type: "tool_execution_start", toolName: "ask_user", args: { question: "A or B?", options: ["A", "B"] } },
				{ type: "agent_settled" },
			]),
		).toMatchObject({
			state: "needs_input",
			question: "A or B?",
			questionOptions: ["A", "B"],
			questionSource: "tool",
		});
		expect(
			settled([assistant("", { stopReason: "error", errorMessage: "429" }), { type: "agent_settled" }]),
		).toMatchObject({ state: "failed", error: "429" });
		expect(
			settled([
				assistant("Done."),
				{ type: "auto_retry_end", success: false, finalError: "gave up" },
				{ type: "agent_settled" },
			]),
		).toMatchObject({ state: "failed", error: "gave up" });
		expect(settled([assistant("Done.")])).toMatchObject({
			state: "failed",
			error: "worker exited before the run settled",
		});
		expect(settled([], { code: 1, signal: null })).toMatchObject({
			state: "failed",
			error: "worker exited with code 1",
		});
		// pi's words on a host without a model: a warning, the cause, then where its docs are. The row names the cause.
		const docs =
			"Use /login to log into a provider via OAuth or API key. See:\n  /p/docs/providers.md\n  /p/docs/models.md\n";
		const noModel = `Warning: No models available. ${docs}No API key found for the selected model.\n\n${docs}`;
		const failedWorker = initialStatus("r", "w", 0);
		failedWorker.stderrTail = noModel.slice(-60);
		expect(finalize(failedWorker, { code: 1, signal: null, now: 2, stderrHead: noModel })).toMatchObject({
			error: "worker exited with code 1: No API key found for the selected model.",
		});
		const onlyTail = initialStatus("r", "w", 0);
		onlyTail.stderrTail = "(node:12) ExperimentalWarning: x\nError: Cannot find module '/x'\n    at y\n";
		expect(finalize(onlyTail, { code: 1, signal: null, now: 2 }).error).toBe(
			"worker exited with code 1: Error: Cannot find module '/x'",
		);
		expect(settled([], { code: null, signal: "SIGKILL" })).toMatchObject({
			state: "failed",
			error: "worker killed by SIGKILL",
		});
		expect(settled([], { code: null, signal: null, spawnError: "pi not found: /x" })).toMatchObject({
			state: "failed",
			error: "pi not found: /x",
		});
		expect(settled([], { code: null, signal: "SIGTERM", stopped: true }).state).toBe("stopped");
		expect(
			endFromOutside(
				initialStatus("r", "w", 0),
				{ state: "failed", code: "runner-died", reason: "runner died", messages: { code: "run-ended" } },
				5,
			),
		).toMatchObject({ state: "failed", error: "runner died", summary: "Failed: runner died" });
	});

	it("detects questions and terminal states", () => {
		expect(looksLikeQuestion("Shall we?")).toBe(true);
		expect(looksLikeQuestion("I need your input on the schema.")).toBe(true);
		expect(looksLikeQuestion("Please confirm the port.")).toBe(true);
		expect(looksLikeQuestion("Done. Tests pass.")).toBe(false);
		expect(looksLikeQuestion("   ")).toBe(false);
		expect(firstSentence("One. Two.")).toBe("One.");
		expect(firstSentence("x".repeat(300))).toHaveLength(160);
		expect(["queued", "working"].map(isTerminal)).toEqual([false, false]);
		expect(["needs_input", "completed", "idle", "failed", "stopped", "error"].every(isTerminal)).toBe(true);
	});
});

describe("liveness and slots", () => {
	it("treats a pid with a different start time as dead (PID reuse) and reclaims slots of dead owners", async () => {
		const { isAlive, processStartTime } = await import("../runner/store/proc.mjs");
		const { tryClaimSlot, releaseSlot, liveSlots } = await import("../runner/life/slots.mjs");
		const { mkdtempSync, writeFileSync, rmSync, readdirSync } = await import("node:fs");
		const { tmpdir } = await import("node:os");
		const { join } = await import("node:path");
		const start = processStartTime(process.pid);
		expect(start).toMatch(/^\d+$/);
		expect(isAlive(process.pid, start)).toBe(true);
		expect(isAlive(process.pid, `${start}1`)).toBe(false);
		expect(isAlive(2 ** 22 + 7, undefined)).toBe(false);

		const dir = mkdtempSync(join(tmpdir(), "pab-slots-"));
		try {
			const me = { pid: process.pid, start, runId: "a" };
			const first = tryClaimSlot(dir, 2, me);
			const second = tryClaimSlot(dir, 2, { ...me, runId: "b" });
			expect([first, second].map((p) => p?.split("/").pop())).toEqual(["slot-0.json", "slot-1.json"]);
			expect(tryClaimSlot(dir, 2, { ...me, runId: "c" })).toBeUndefined();
			// A slot whose owner's start time no longer matches is stale and can be taken over.
			writeFileSync(join(dir, "slot-1.json"), JSON.stringify({ pid: process.pid, start: "1", runId: "b" }));
			expect(liveSlots(dir, 2)).toBe(1);
			expect(tryClaimSlot(dir, 2, { ...me, runId: "c" })).toBe(join(dir, "slot-1.json"));
			// Releasing is owner-checked: "b" no longer owns slot-1.
			releaseSlot(join(dir, "slot-1.json"), "b");
			expect(liveSlots(dir, 2)).toBe(2);
			releaseSlot(first, "a");
			expect(readdirSync(dir).sort()).toEqual(["slot-1.json"]);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
