import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

/** How many of the slowest files the closing lines name. */
const SLOWEST = 10;

/**
 * Prints where the suite's time went (each project's summed file time, the slowest files) and one plain
 * closing line ("tests: N passed, N failed, N skipped") that CI reads.
 */
export default class SummaryReporter implements Reporter {
	onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
		let passed = 0;
		let failed = 0;
		let skipped = 0;
		for (const module of testModules) {
			for (const test of module.children.allTests()) {
				const state = test.result().state;
				if (state === "passed") passed += 1;
				else if (state === "failed") failed += 1;
				else skipped += 1;
			}
			if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed += 1;
		}
		process.stdout.write(`\n${timeLines(testModules).join("\n")}\n`);
		process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
	}
}

function seconds(ms: number): string {
	return `${(ms / 1000).toFixed(1)} s`;
}

function timeLines(testModules: ReadonlyArray<TestModule>): string[] {
	const perProject = new Map<string, { files: number; ms: number }>();
	const files = testModules.map((module) => {
		const { duration, collectDuration, setupDuration } = module.diagnostic();
		const ms = duration + collectDuration + setupDuration;
		const project = module.project.name || "default";
		const sum = perProject.get(project) ?? { files: 0, ms: 0 };
		perProject.set(project, { files: sum.files + 1, ms: sum.ms + ms });
		return { name: relative(module.project.config.root, module.moduleId), ms };
	});
	const lines = ["where the time went (file time: import, setup and tests; files run two at once):"];
	for (const [project, sum] of perProject) lines.push(`  ${project}: ${sum.files} files, ${seconds(sum.ms)}`);
	lines.push(`  the ${SLOWEST} slowest files:`);
	for (const file of files.sort((a, b) => b.ms - a.ms).slice(0, SLOWEST))
		lines.push(`    ${seconds(file.ms).padStart(8)}  ${file.name}`);
	return lines;
}
