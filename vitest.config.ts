import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { endToEndTests } from "./test-support/test-tiers.ts";

// End-to-end tests spawn real pi processes; two cores means few files at once and generous timeouts
// (these are hang guards, not speed asserts). Two projects: `unit` (no pi, no tmux: `npm run test:unit`)
// and `e2e`; `npm test` runs both.
const e2e = endToEndTests(dirname(fileURLToPath(import.meta.url)));

export default defineConfig({
	test: {
		pool: "forks",
		maxWorkers: 2,
		testTimeout: 60_000,
		hookTimeout: 60_000,
		reporters: ["default", "./test-support/summary-reporter.ts"],
		projects: [
			{
				extends: true,
				test: {
					name: "unit",
					include: ["tests/**/*.test.ts"],
					exclude: e2e,
					setupFiles: ["./test-support/setup-unit.ts"],
					// Unit files spawn nothing and restore what they change (timers, env): one module graph per
					// worker instead of one per file (imports were 70 % of the tier's time: 42 s -> 10 s here).
					isolate: false,
				},
			},
			{ extends: true, test: { name: "e2e", include: e2e, setupFiles: ["./test-support/setup-e2e.ts"] } },
		],
	},
});
