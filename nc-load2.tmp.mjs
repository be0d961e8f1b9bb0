import { createJiti } from "jiti";
import * as piAgent from "@earendil-works/pi-coding-agent";
import * as typebox from "typebox";
import { Session } from "node:inspector/promises";
const entry = process.argv[2];
const virtualModules = { "@earendil-works/pi-coding-agent": piAgent, typebox };
const fakePi = new Proxy({}, { get: (_t, key) => (key === "then" ? undefined : () => undefined) });
const warm = createJiti(import.meta.url, { moduleCache: false, virtualModules, tryNative: false });
await (await warm.import("/tmp/nc-var/empty.ts", { default: true }))(fakePi);
const session = new Session(); session.connect();
await session.post("Profiler.enable"); await session.post("Profiler.setSamplingInterval", { interval: 20 }); await session.post("Profiler.start");
const jiti = createJiti(import.meta.url, { moduleCache: false, virtualModules, tryNative: false });
const mod = await jiti.import(entry, { default: true });
await mod(fakePi);
const { profile } = await session.post("Profiler.stop");
// self time by function+url
const self = new Map(); const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = profile.timeDeltas; const counts = new Map();
profile.samples.forEach((id, i) => counts.set(id, (counts.get(id) ?? 0) + (dt[i] ?? 0)));
for (const [id, us] of counts) { const n = byId.get(id); const key = `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.split("/").slice(-2).join("/")}:${n.callFrame.lineNumber}`; self.set(key, (self.get(key) ?? 0) + us); }
// total per url (inclusive approx by self)
const byUrl = new Map(); for (const [k, us] of self) { const u = k.split(" ")[1].split(":")[0]; byUrl.set(u, (byUrl.get(u) ?? 0) + us); }
console.log([...byUrl].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, v]) => `${(v / 1000).toFixed(2)}ms ${k}`).join("\n"));
console.log("--");
console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${(v / 1000).toFixed(2)}ms ${k}`).join("\n"));
