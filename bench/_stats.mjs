// Shared number formatting for the benchmarks: medians with their spread, never a best run.
import { readFileSync } from "node:fs";

/** @param {number[]} values @param {number} p */
export function pct(values, p) {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** "median X ms (p5-p95 A-B, n=N)" @param {number[]} values @param {string} [unit] */
export function spread(values, unit = "ms") {
	if (values.length === 0) return "no samples";
	const f = (/** @type {number} */ n) => `${n.toFixed(unit === "ms" && n < 10 ? 2 : 1)}`;
	return `median ${f(pct(values, 50))} ${unit} (p5 ${f(pct(values, 5))}, p95 ${f(pct(values, 95))}, n=${values.length})`;
}

/** The machine's load, printed with every set of numbers. */
export function load() {
	try {
		return `load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`;
	} catch {
		return "load average unknown";
	}
}
