import { enableCompileCache } from "node:module"; enableCompileCache();
import * as piAgent from "@earendil-works/pi-coding-agent";
import * as typebox from "typebox";
const c0 = process.cpuUsage();
for (const m of process.argv.slice(2)) await import(m);
const c = process.cpuUsage(c0);
console.log(((c.user + c.system) / 1000).toFixed(2));
