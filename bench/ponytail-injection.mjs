// Prints the characters ponytail injects per mode, and the wall time of `pi -p` (faux model,
// throwaway agent dir) with the extension against without it. Run with --experimental-strip-types.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { condensedPonytailRules, ponytailRules } from "../src/ponytail/rules.ts";
import { createTestAgent, EXTENSION_ENTRY, runPi, systemMessages } from "../test-support/pi-harness.ts";

/** @type {("lite" | "full" | "ultra")[]} */
const LEVELS = ["lite", "full", "ultra"];
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const agent = createTestAgent();
try {
	console.log("injected characters (section text; pi adds <ponytail> tags):");
	for (const mode of LEVELS) console.log(`  ${mode.padEnd(10)} ${ponytailRules(mode).length}`);
	console.log(
		`  ${"condensed".padEnd(10)} ${LEVELS.map((m) => `${m} ${condensedPonytailRules(m).length}`).join(", ")}`,
	);

	// Cross-check with what the model actually received in a real run.
	const seen = [];
	/** @type {[string, Record<string, string>][]} */
	const probes = [
		["full", { PONYTAIL_DEFAULT_MODE: "full" }],
		["ultra", { PONYTAIL_DEFAULT_MODE: "ultra" }],
		["ultra condensed", { PONYTAIL_DEFAULT_MODE: "ultra", PONYTAIL_CONDENSED: "1" }],
	];
	for (const [label, env] of probes) {
		await runPi(agent, { args: ["-p", "--no-session", "--", "hi"], env });
		const call = agent.calls().at(-1);
		const section = call ? (systemMessages(call)[0]?.sections?.ponytail ?? "") : "";
		seen.push(`${label} ${section.length}`);
	}
	console.log(`  received by the model (with tags): ${seen.join(", ")}`);

	const ponytailOnly = join(agent.root, "ponytail-only.ts");
	writeFileSync(
		ponytailOnly,
		`export { registerPonytail as default } from ${JSON.stringify(join(process.cwd(), "src/ponytail/index.ts"))};\n`,
	);
	const variants = {
		without: { withExtension: false, args: [] },
		"ponytail only": { withExtension: false, args: ["-e", ponytailOnly] },
		"whole package": { withExtension: false, args: ["-e", EXTENSION_ENTRY] },
	};
	/** @type {Record<string, number[]>} */
	const times = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
	// Warm-up, then interleave variants so machine noise hits all of them alike.
	for (const variant of Object.values(variants))
		await runPi(agent, { withExtension: false, args: [...variant.args, "-p", "--no-session", "--", "hi"] });
	for (let i = 0; i < RUNS; i++) {
		for (const [name, variant] of Object.entries(variants)) {
			const start = performance.now();
			const result = await runPi(agent, {
				withExtension: false,
				args: [...variant.args, "-p", "--no-session", "--", "hi"],
			});
			times[name]?.push(performance.now() - start);
			if (result.code !== 0) throw new Error(`${name}: pi exited ${result.code}: ${result.stderr}`);
		}
	}
	/** @param {number[]} xs */
	const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
	const base = median(times.without ?? []);
	const baseMin = Math.min(...(times.without ?? []));
	// The minimum is shown too: on a busy machine it is the least noisy estimate of the real cost.
	console.log(`pi -p wall time over ${RUNS} runs each (median, min):`);
	for (const name of Object.keys(variants)) {
		const m = median(times[name] ?? []);
		const min = Math.min(...(times[name] ?? []));
		console.log(
			`  ${name.padEnd(14)} median ${m.toFixed(0)} ms ratio ${(m / base).toFixed(3)}   min ${min.toFixed(0)} ms ratio ${(min / baseMin).toFixed(3)}`,
		);
	}
} finally {
	agent.cleanup();
}
