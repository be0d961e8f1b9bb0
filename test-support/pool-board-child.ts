/**
 * Child process for the two-boards FIFO test: a board of its own on a shared store (as a second pi
 * session's would be) that dispatches N rows to one target, one after another, then ticks (the
 * settle step, which pumps the queue) until every row it dispatched is over, and prints their ids.
 * argv: storeDir count target cwd tag
 */
import { createBoardService } from "../src/board/engine/service.ts";
import { PI_CLI } from "./pi-harness.ts";

const [storeDir = "", count = "0", target = "", cwd = process.cwd(), tag = ""] = process.argv.slice(2);
const board = createBoardService({ storeDir, piCommand: [process.execPath, PI_CLI], env: { ...process.env } });
const ids: string[] = [];
for (let n = 0; n < Number(count); n++) {
	const row = await board.dispatch({ prompt: `${tag} task ${n}`, cwd, target });
	ids.push(row.id);
	await board.supervise?.();
}
for (;;) {
	await board.supervise?.();
	const rows = await Promise.all(ids.map((id) => board.get(id)));
	if (rows.every((row) => row && !row.alive && row.state !== "queued" && row.state !== "working")) break;
	await new Promise((resolve) => setTimeout(resolve, 100));
}
process.stdout.write(`${JSON.stringify(ids)}\n`);
