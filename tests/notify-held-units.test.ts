/**
 * A question's needs-input waits while the supervisor decides it, whichever comes first: the status
 * showing the question (a local runner) or the decision (a target run's link decides from the mirrored
 * event, ahead of the far status). Left to the person, it goes out once; answered for them, never.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { addNotifier, makeNotifier } from "../runner/notify/notifiers.mjs";
import { eventNames, readEvent } from "../runner/notify/outbox.mjs";
import { runNotices } from "../runner/notify/run-notices.mjs";
import type { RunStatus } from "../src/board/engine/types.ts";

const store = mkdtempSync(join(tmpdir(), "pab-notify-held-"));
afterAll(() => rmSync(store, { recursive: true, force: true }));

const asking = (question: string) =>
	({ state: "needs_input", questionSource: "tool", question }) as unknown as RunStatus;
const working = { state: "working" } as unknown as RunStatus;
const sent = () =>
	eventNames(store)
		.map((name) => readEvent(store, name))
		.map((event) => [event?.event, event?.text]);

describe("needs-input held while the supervisor decides", () => {
	it("goes out once when left to the person, before or after the status shows it, and never when answered", async () => {
		const made = makeNotifier(
			{ name: "hook", url: "http://127.0.0.1:9/hook", on: "needs-input,answered" },
			Date.now(),
		);
		if (!("notifier" in made)) throw new Error(made.error);
		await addNotifier(store, made.notifier);
		const notices = runNotices({ storeDir: store, rowId: "r1", runId: "run-1", maxConcurrent: 1 }, () => true);

		// The status first (a local runner): held, then sent when the supervisor leaves it.
		notices.observe(asking("Which region?"));
		expect(sent()).toEqual([]);
		notices.leftToPerson("Which region?");
		expect(sent()).toEqual([["needs-input", "Which region?"]]);

		// The decision first (a link): sent when the status shows it, not held.
		notices.observe(working);
		notices.leftToPerson("Delete the build directory?");
		notices.observe(asking("Delete the build directory?"));
		expect(sent().at(-1)).toEqual(["needs-input", "Delete the build directory?"]);

		// Answered for the person before the status showed it: the question is never sent as theirs.
		notices.observe(working);
		notices.answered("Go on?", "yes", "rule rules.md:4");
		notices.observe(asking("Go on?"));
		notices.observe(working);
		expect(sent()).toEqual([
			["needs-input", "Which region?"],
			["needs-input", "Delete the build directory?"],
			["answered", '"Go on?" -> "yes" by rule rules.md:4'],
		]);
	});
});
