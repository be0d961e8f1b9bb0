import { enableCompileCache } from "node:module"; enableCompileCache();
import { createJiti } from "jiti";
import * as piAgent from "@earendil-works/pi-coding-agent";
import * as typebox from "typebox";
const entry = process.argv[2];
const virtualModules = { "@earendil-works/pi-coding-agent": piAgent, typebox };
const fakePi = new Proxy({}, { get: (_t, key) => (key === "then" ? undefined : () => undefined) });
// warm jiti itself with the empty extension, as pi's start has loaded its builtins
const warm = createJiti(import.meta.url, { moduleCache: false, virtualModules, tryNative: false });
await (await warm.import("/tmp/nc-var/empty.ts", { default: true }))(fakePi);
const jiti = createJiti(import.meta.url, { moduleCache: false, virtualModules, tryNative: false });
const c0 = process.cpuUsage(); const t0 = performance.now();
const mod = await jiti.import(entry, { default: true }); const before = process.cpuUsage(c0);
if (typeof mod === "function" && process.argv[3] !== "noreg") await mod(fakePi);
const c = process.cpuUsage(c0);
console.log(((c.user + c.system) / 1000).toFixed(2), ((before.user + before.system) / 1000).toFixed(2));
