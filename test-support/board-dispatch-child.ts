/**
 * Child process for concurrency tests: dispatches N rows into a store at once and exits without
 * waiting for them. argv: storeDir count maxConcurrent cwd tag
 */
import { createBoardService } from "../src/board/engine/service.ts";
import { PI_CLI } from "./pi-harness.ts";

const [storeDir, count, max, cwd, tag] = process.argv.slice(2);
const board = createBoardService({ storeDir, piCommand: [process.execPath, PI_CLI], maxConcurrent: Number(max) });
const rows = await Promise.all(
	Array.from({ length: Number(count) }, (_, n) =>
		board.dispatch({ prompt: `${tag} task ${n}`, cwd: cwd ?? process.cwd() }),
	),
);
process.stdout.write(`${JSON.stringify(rows.map((row) => row.id))}\n`);
