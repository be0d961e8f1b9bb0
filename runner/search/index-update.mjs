// The index's writer as a process of its own: `node index-update.mjs <store> [budgetMs] [waitMs]`. A board,
// the web server and the subcommand start it before a query, so building or catching up never holds their
// event loop; it prints one JSON line (what it did) and exits. See search-index.mjs.
import { updateIndex } from "./search-index.mjs";

const [storeRoot, budget, wait, check] = process.argv.slice(2);
if (!storeRoot) {
	process.stderr.write("usage: index-update.mjs <store> [budgetMs] [waitMs]\n");
	process.exit(2);
}
try {
	const result = await updateIndex(storeRoot, {
		...(budget ? { budgetMs: Number(budget) } : {}),
		waitMs: wait ? Number(wait) : 0,
		check: check === "check",
	});
	process.stdout.write(`${JSON.stringify(result ?? { busy: true })}\n`);
} catch (error) {
	process.stdout.write(`${JSON.stringify({ error: String(/** @type {Error} */ (error)?.message ?? error) })}\n`);
	process.exitCode = 1;
}
