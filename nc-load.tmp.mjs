import { createJiti } from "jiti";
import * as piAgent from "@earendil-works/pi-coding-agent";
import * as typebox from "typebox";
const N = Number(process.argv[3] ?? 30);
const entry = process.argv[2];
const virtualModules = { "@earendil-works/pi-coding-agent": piAgent, typebox };
const fakePi = new Proxy({}, { get: (_t, key) => (key === "then" ? undefined : () => undefined) });
const samples = [];
for (let i = 0; i < N + 3; i++) {
	const jiti = createJiti(import.meta.url, { moduleCache: false, virtualModules, tryNative: false });
	const c0 = process.cpuUsage();
	const mod = await jiti.import(entry, { default: true });
	await mod(fakePi);
	const c = process.cpuUsage(c0);
	if (i >= 3) samples.push((c.user + c.system) / 1000);
}
samples.sort((a, b) => a - b);
console.log(entry.split("/").slice(-2).join("/"), "median", samples[N >> 1].toFixed(2), "p10", samples[Math.floor(N * 0.1)].toFixed(2), "p90", samples[Math.floor(N * 0.9)].toFixed(2));
