import { defineConfig } from "vitest/config";

// End-to-end tests spawn real pi processes; two cores means few files at once and generous timeouts
// (these are hang guards, not speed asserts).
export default defineConfig({
	test: {
		include: ["tests/**/*.test.ts"],
		pool: "forks",
		maxWorkers: 2,
		testTimeout: 60_000,
		hookTimeout: 60_000,
		reporters: ["default", "./test-support/summary-reporter.ts"],
	},
});
