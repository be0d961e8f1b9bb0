/**
 * A local worker's TMPDIR is the store's own `tmp` (0700): jiti keeps its compiled copy of our extension
 * there (and node its compile cache), so a shared /tmp/jiti that another user made first (here: a file
 * where jiti wants its folder, which even root cannot write into) does not make every start compile
 * the extension again. The worker's tools get the same private TMPDIR.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, type TestAgent } from "../test-support/pi-harness.ts";

let agent: TestAgent | undefined;
afterAll(() => agent?.cleanup());

describe("a local worker's temp dir", () => {
	it("is the store's private tmp, where jiti caches the extension when the shared one cannot be written", async () => {
		const shared = join(`${process.env.TMPDIR ?? "/tmp"}`, `pab-shared-tmp-${process.pid}`);
		agent = createTestAgent({
			script: {
				rules: [
					{
						match: "TMP",
						steps: [
							{ toolCall: { name: "bash", args: { command: 'echo "TMPDIR=$TMPDIR"' } } },
							{ text: "Done." },
						],
					},
				],
				fallback: [{ text: "ok" }],
			},
			env: { TMPDIR: shared },
		});
		mkdirSync(shared, { recursive: true });
		// What another user's /tmp/jiti is to this one: jiti cannot make or write its cache there.
		writeFileSync(join(shared, "jiti"), "not a directory\n");
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "TMP where", cwd: agent.cwd });
		const done = await waitDone(board, row.id, 120_000);
		expect(done.state).toBe("completed");
		const tmp = join(board.storeDir, "tmp");
		expect(statSync(tmp).mode & 0o777).toBe(0o700);
		expect(readFileSync(join(done.runDir ?? "", "events.jsonl"), "utf8")).toContain(`TMPDIR=${tmp}`);
		expect(readdirSync(join(tmp, "jiti")).some((name) => name.startsWith("src-index"))).toBe(true);
	}, 180_000);
});
