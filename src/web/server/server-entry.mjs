#!/usr/bin/env node
// The board's web server process: plain node, started detached by `/agent-board serve` (serve-control.ts)
// and living on after the pi that started it, like the runner. It loads the board's TypeScript engine
// the way pi loads an extension, through jiti with pi's packages taken from that pi (pi-modules.mjs),
// then hands over to main.ts. Arguments: --store <dir> --host <addr> --port <n> --cwd <dir> [--pi-root <dir>].
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { piModules } from "./pi-modules.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));

/** @param {string[]} argv */
function parseArgs(argv) {
	/** @type {Record<string, string>} */
	const out = {};
	for (let i = 0; i < argv.length; i += 2) {
		const key = argv[i] ?? "";
		const value = argv[i + 1];
		if (!key.startsWith("--") || value === undefined) throw new Error(`bad argument ${JSON.stringify(key)}`);
		out[key.slice(2)] = value;
	}
	return out;
}

try {
	const args = parseArgs(process.argv.slice(2));
	process.title = "agent-board-web";
	const { createJiti, alias, from } = piModules(args["pi-root"], resolve(HERE, "../../.."));
	process.stderr.write(
		`${new Date().toISOString()} loading the board engine from ${resolve(HERE, "../../..")} with pi's packages from ${from}\n`,
	);
	const jiti = createJiti(import.meta.url, { alias, moduleCache: true });
	const main = /** @type {{ runServer(options: Record<string, string | undefined>): Promise<void> }} */ (
		await jiti.import(join(HERE, "main.ts"))
	);
	await main.runServer({ store: args.store, host: args.host, port: args.port, cwd: args.cwd });
} catch (error) {
	process.stderr.write(
		`agent-board web: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
	);
	process.exit(1);
}
