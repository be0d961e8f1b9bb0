/** A missing prerequisite fails a test under CI=true and skips it elsewhere, naming what is missing; never a silent pass. */
import { afterEach, describe, expect, it, vi, type TestContext } from "vitest";
import { requires } from "../test-support/requires.ts";

afterEach(() => {
	vi.unstubAllEnvs();
	vi.restoreAllMocks();
});

describe("requires", () => {
	it("does nothing when the prerequisite is there, fails under CI=true, skips with the reason elsewhere", () => {
		const notes: string[] = [];
		const ctx = {
			skip: (note?: string) => {
				notes.push(note ?? "");
				throw new Error("skipped");
			},
		} as unknown as TestContext;
		vi.spyOn(console, "warn").mockImplementation(() => undefined);
		requires(ctx, "root", undefined);
		expect(notes).toEqual([]);
		vi.stubEnv("CI", "true");
		expect(() => requires(ctx, "root", "running as uid 1000, not root")).toThrow(
			"requires root: running as uid 1000, not root (under CI=true a missing prerequisite fails the test)",
		);
		expect(notes).toEqual([]);
		vi.stubEnv("CI", "");
		expect(() => requires(ctx, "root", "running as uid 1000, not root")).toThrow("skipped");
		expect(notes).toEqual(["requires root: running as uid 1000, not root"]);
	});
});
