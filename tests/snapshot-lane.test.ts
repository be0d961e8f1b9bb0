/**
 * The far side's snapshot lane (runner/far/snapshot-lane.mjs): at most its lanes at once, coalesced per
 * row (asked again while that row's runs: once after it, with the newest work, whoever asked), a failure
 * reaching only the callers of that run.
 */
import { describe, expect, it } from "vitest";
import { snapshotLane } from "../runner/far/snapshot-lane.mjs";

/** A piece of work the test finishes by hand. */
function gate<T>() {
	let release: (value: T) => void = () => undefined;
	let fail: (error: Error) => void = () => undefined;
	const promise = new Promise<T>((resolve, reject) => {
		release = resolve;
		fail = reject;
	});
	return { promise, release, fail };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the snapshot lane", () => {
	it("runs at most its lanes at once, the next row's as one ends", async () => {
		const lane = snapshotLane(2);
		const gates = { a: gate<string>(), b: gate<string>(), c: gate<string>() };
		const started: string[] = [];
		const ask = (key: "a" | "b" | "c") =>
			lane.request(key, () => {
				started.push(key);
				return gates[key].promise;
			});
		const results = [ask("a"), ask("b"), ask("c")];
		await settle();
		expect(started).toEqual(["a", "b"]);
		expect(lane.running).toBe(2);
		gates.b.release("B");
		await settle();
		expect(started).toEqual(["a", "b", "c"]);
		gates.a.release("A");
		gates.c.release("C");
		expect(await Promise.all(results)).toEqual(["A", "B", "C"]);
		await settle();
		expect(lane.running).toBe(0);
	});

	it("coalesces a row's requests made while its snapshot runs into one run after it, with the newest work", async () => {
		const lane = snapshotLane(2);
		const first = gate<string>();
		const second = gate<string>();
		const calls: string[] = [];
		const one = lane.request("row", () => {
			calls.push("first");
			return first.promise;
		});
		await settle();
		const asked = [2, 3, 4].map((n) =>
			lane.request("row", () => {
				calls.push(`asked ${n}`);
				return second.promise;
			}),
		);
		await settle();
		expect(calls).toEqual(["first"]);
		first.release("one");
		expect(await one).toBe("one");
		await settle();
		expect(calls).toEqual(["first", "asked 4"]);
		second.release("two");
		expect(await Promise.all(asked)).toEqual(["two", "two", "two"]);
		await settle();
		expect(lane.running).toBe(0);
	});

	it("a failed snapshot fails only the callers of that run; the row's next request runs afresh", async () => {
		const lane = snapshotLane(1);
		const broken = gate<string>();
		const failed = lane.request("row", () => broken.promise);
		broken.fail(new Error("git add: disk full"));
		await expect(failed).rejects.toThrow("git add: disk full");
		expect(await lane.request("row", () => Promise.resolve("ok"))).toBe("ok");
	});
});
