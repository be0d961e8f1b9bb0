// Full-text search at 1,000 / 10,000 / 100,000 rows (runner/search/): a full build's time, the index's size
// against the sessions', a query's p50/p95 (the index read in this process, as the subcommand, the board's
// `/` and the web server read it), an update that finds nothing new, and how soon a row that just finished is
// found (its files written, then searches until it shows: through the writer process, and with the store's
// keeper alive), and a row that was there and changed, through the writer process. The rows are one real
// row (a real pi worker: a prompt, tool calls and outputs, text) copied with fresh ids, each with a word of
// its own in its tool's output.
// Run: node --experimental-strip-types bench/search.mjs [--rows 1000,10000] [--queries 200]
import {
	appendFileSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
	existsSync,
} from "node:fs";
import { join } from "node:path";
import { parseQuery } from "../runner/search/query-parse.mjs";
import { refreshIndex, searchStore } from "../runner/search/search.mjs";
import { ensureKeeper } from "../runner/keeper/ensure-keeper.mjs";
import { keeperAlive } from "../runner/keeper/keeper-file.mjs";
import { keptByKeeper } from "../runner/search/search-duty.mjs";
import { indexPaths, updateIndex } from "../runner/search/search-index.mjs";
import { touchNotify } from "../runner/store/fs-util.mjs";
import { openReader, queryIndex } from "../runner/search/search-query.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import { cloneRows } from "../test-support/clone-rows.ts";
import { createTestAgent, PI_CLI } from "../test-support/pi-harness.ts";
import { load, pct, spread } from "./_stats.mjs";

/** @param {string} name @param {string} fallback */
const arg = (name, fallback) => {
	const i = process.argv.indexOf(name);
	return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const SIZES = arg("--rows", "1000,10000").split(",").map(Number);
const QUERIES = Number(arg("--queries", "200"));
const FRESH = Number(arg("--fresh", "10"));

const agent = createTestAgent({
	script: {
		rules: [
			{
				match: "SEED",
				steps: [
					{
						toolCall: {
							name: "bash",
							args: { command: "echo checking the zqmarker build; ls -la /usr/lib | head -40" },
						},
					},
					{
						toolCall: {
							name: "bash",
							args: { command: "printf 'test suite: 41 passed, 1 flaky (zqmarker)\\n'" },
						},
					},
					{
						text: "The build passes; one flaky test in the suite names zqmarker. I looked at the postgres deadlock in the migration and it does not reproduce.",
					},
				],
			},
		],
		fallback: [{ text: "Done." }],
	},
});
const storeDir = join(agent.root, "store");
const service = createBoardService({ storeDir, env: agent.env, piCommand: [process.execPath, PI_CLI] });

/** @param {() => Promise<boolean>} check @param {number} timeoutMs @param {string} what */
async function until(check, timeoutMs, what) {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`bench: ${what} not reached in time`);
		await new Promise((r) => setTimeout(r, 50));
	}
}

/** @param {string} dir */
function bytesIn(dir) {
	let total = 0;
	for (const name of readdirSync(dir)) total += statSync(join(dir, name)).size;
	return total;
}

const mb = (/** @type {number} */ bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** @typedef {{ rel: string, dir: boolean, text: string }} SeedFile */

/**
 * The seed row's files read once (rows/<seed>/ whole, its session), so a copy is only writes: copying the
 * directory file by file and parsing its meta each time took a minute per 10,000 rows.
 * @param {string} seedId @param {string} session @returns {SeedFile[]}
 */
function snapshotSeed(seedId, session) {
	/** @type {SeedFile[]} */
	const files = [];
	/** @param {string} rel */
	const walk = (rel) => {
		for (const entry of readdirSync(join(storeDir, "rows", seedId, rel), { withFileTypes: true })) {
			const child = rel ? join(rel, entry.name) : entry.name;
			if (entry.isDirectory()) {
				files.push({ rel: child, dir: true, text: "" });
				walk(child);
			} else if (entry.isFile()) {
				let text = readFileSync(join(storeDir, "rows", seedId, child), "utf8");
				if (entry.name === "meta.json") {
					const meta = JSON.parse(text);
					meta.name = "@@BENCH_NAME@@";
					text = JSON.stringify(meta, null, 2);
				}
				files.push({ rel: child, dir: false, text });
			}
		}
	};
	walk("");
	files.push({ rel: "\u0000session", dir: false, text: session });
	return files;
}

/** A copy's id: the seed's and its number, so that a later copy sorts after an earlier one, as a row made later does. @param {string} seedId @param {number} n */
const cloneId = (seedId, n) => `${seedId}-c${String(n).padStart(7, "0")}`;

/**
 * Writes the seed row as rows from..to-1 (cloneId), named "bench row <n>", each session's marker word
 * made its own (zq<n>), and each row's notify/ mark, as a runner's last touch leaves it.
 * @param {string} seedId @param {SeedFile[]} seed @param {number} from @param {number} to
 */
function seedRows(seedId, seed, from, to) {
	const ids = [];
	for (let n = from; n < to; n++) {
		const id = cloneId(seedId, n);
		const rowDir = join(storeDir, "rows", id);
		mkdirSync(rowDir, { mode: 0o700 });
		for (const file of seed) {
			if (file.dir) {
				mkdirSync(join(rowDir, file.rel.split(seedId).join(id)), { mode: 0o700 });
				continue;
			}
			if (file.rel === "\u0000session") {
				const text = file.text.split(seedId).join(id).split("zqmarker").join(`zq${n}`);
				writeFileSync(join(storeDir, "sessions", `${id}.jsonl`), text, { mode: 0o600 });
				continue;
			}
			const text = file.text.split(seedId).join(id).replace("@@BENCH_NAME@@", `bench row ${n}`);
			writeFileSync(join(rowDir, file.rel.split(seedId).join(id)), text, { mode: 0o600 });
		}
		writeFileSync(join(storeDir, "notify", id), "");
		ids.push(id);
	}
	return ids;
}

try {
	const seed = await service.dispatch({ prompt: "SEED: check the build", cwd: agent.cwd });
	await until(async () => (await service.get(seed.id))?.state === "completed", 120_000, "the seed row");
	await until(
		async () =>
			!existsSync(join(String(seed.runDir), "runner.json")) || (await service.get(seed.id))?.alive === false,
		10_000,
		"the seed runner's end",
	);
	mkdirSync(join(storeDir, "notify"), { recursive: true });
	// cloneRows waits for the seed's runner to be gone (its last status write) before anything is read.
	cloneRows(storeDir, seed.id, 0, 0);
	const session = readFileSync(join(storeDir, "sessions", `${seed.id}.jsonl`), "utf8");
	const seedFiles = snapshotSeed(seed.id, session);
	console.log(
		`seed row: ${mb(Buffer.byteLength(session))} session, ${session.split("\n").length - 1} lines (${load()})`,
	);
	let have = 1;
	for (const size of SIZES) {
		let t = performance.now();
		seedRows(seed.id, seedFiles, have, size);
		have = size;
		const seedMs = performance.now() - t;
		rmSync(indexPaths(storeDir).file, { force: true });
		t = performance.now();
		await updateIndex(storeDir);
		const buildMs = performance.now() - t;
		const indexBytes = statSync(indexPaths(storeDir).file).size;
		const sessionBytes = bytesIn(join(storeDir, "sessions"));
		console.log(`\n${size.toLocaleString("en-US")} rows (seeded in ${(seedMs / 1000).toFixed(1)} s; ${load()})`);
		console.log(
			`  full build: ${(buildMs / 1000).toFixed(2)} s; index ${mb(indexBytes)} for ${mb(sessionBytes)} of sessions (${(indexBytes / sessionBytes).toFixed(2)}x)`,
		);

		const db = await openReader(storeDir);
		if (!db) throw new Error("no index after the build");
		/** @type {Record<string, (n: number) => string>} */
		const kinds = {
			"a word of one row": (n) => `zq${1 + ((n * 7919) % (size - 1))}`,
			"a word in every row": () => "flaky",
			"a phrase in every row": () => '"postgres deadlock"',
			"two words, one row's": (n) => `zq${1 + ((n * 104729) % (size - 1))} passed`,
			"filters only": () => "s:completed since:1d",
			"a word + file: (none)": () => "flaky file:src/",
			"a prefix": (n) => `zq${1 + (n % 9)}*`,
			"a 4-letter prefix": (n) => `zq${10 + (n % 90)}*`,
			"a prefix of a word in every row": () => "flak*",
			"a 6-letter prefix, every row": () => "deadl*",
		};
		for (const [kind, text] of Object.entries(kinds)) {
			/** @type {number[]} */
			const times = [];
			let hits = 0;
			for (let n = 0; n < QUERIES; n++) {
				const query = parseQuery(text(n));
				const start = performance.now();
				hits += queryIndex(db, query, { limit: 50 }).length;
				times.push(performance.now() - start);
			}
			console.log(
				`  query, ${kind}: ${spread(times)}; p95 ${pct(times, 95).toFixed(2)} ms; ${(hits / QUERIES).toFixed(1)} hits`,
			);
		}
		db.close();

		/** @type {number[]} */
		const idle = [];
		for (let n = 0; n < 20; n++) {
			const start = performance.now();
			await updateIndex(storeDir);
			idle.push(performance.now() - start);
		}
		console.log(`  update with nothing new (in process): ${spread(idle)}`);

		// Through the writer process alone: no keeper (the seed's exits 3 s after its run).
		await until(async () => !keeperAlive(storeDir), 60_000, "no keeper");
		/** @type {number[]} */
		const fresh = [];
		for (let n = 0; n < FRESH; n++) {
			const [id] = seedRows(seed.id, seedFiles, have, have + 1);
			// The row's event: its files are written (a runner's last write, then its notify/ touch).
			const start = performance.now();
			have += 1;
			let found = false;
			while (!found) {
				const result = await searchStore(storeDir, `zq${have - 1}`, { limit: 5 });
				found = result.hits.some((hit) => hit.rowId === id);
			}
			fresh.push(performance.now() - start);
		}
		console.log(`  a new row searchable (written, then the writer process and the query): ${spread(fresh)}`);
		// A row that was there already changes (a reply's run: its session grows, its mark is touched): found
		// only by the writer's stat of every notify/ mark.
		/** @type {number[]} */
		const changed = [];
		for (let n = 0; n < FRESH; n++) {
			const old = cloneId(seed.id, 1 + ((n * 7919) % (size - 1)));
			const word = `zqchanged${size}x${n}`;
			const entry = { type: "message", message: { role: "user", content: `a reply: ${word}` } };
			const start = performance.now();
			appendFileSync(join(storeDir, "sessions", `${old}.jsonl`), `${JSON.stringify(entry)}\n`);
			touchNotify(storeDir, old);
			let found = false;
			while (!found) {
				if (performance.now() - start > 60_000) throw new Error(`bench: changed row ${old} not found in 60 s`);
				const result = await searchStore(storeDir, word, { limit: 5 });
				found = result.hits.some((hit) => hit.rowId === old);
			}
			changed.push(performance.now() - start);
		}
		console.log(`  a row that was there, changed (the writer process and the query): ${spread(changed)}`);
		/** @type {number[]} */
		const spawned = [];
		for (let n = 0; n < 10; n++) {
			const start = performance.now();
			await new Promise((r) => setTimeout(r, 600));
			const t0 = performance.now();
			await refreshIndex(storeDir);
			spawned.push(performance.now() - t0);
			void start;
		}
		console.log(`  the writer process, nothing new: ${spread(spawned)}`);

		// The same with the store's keeper alive, as a run's end finds it (a runner's end starts one when a row
		// changed since its last pass): the keeper indexes what changed, the search asks it and starts no writer.
		// A running row touches its notify/ mark four times a second: the keeper lives while it runs.
		const running = setInterval(() => writeFileSync(join(storeDir, "notify", seed.id), `${Date.now()}\n`), 250);
		/** @type {number[]} */
		const kept = [];
		for (let n = 0; n < FRESH; n++) {
			ensureKeeper(storeDir, { node: process.execPath, env: process.env, maxConcurrent: 4 });
			await until(
				async () => keptByKeeper(storeDir) !== undefined,
				Number(process.env.BENCH_KEEPER_WAIT_MS ?? 300_000),
				"a keeper keeping the index",
			).catch((error) => {
				console.log(readFileSync(join(storeDir, "keeper.log"), "utf8").slice(-2000));
				throw error;
			});
			const [id] = seedRows(seed.id, seedFiles, have, have + 1);
			const start = performance.now();
			have += 1;
			let found = false;
			while (!found) {
				const result = await searchStore(storeDir, `zq${have - 1}`, { limit: 5 });
				found = result.hits.some((hit) => hit.rowId === id);
			}
			kept.push(performance.now() - start);
		}
		console.log(
			`  a new row searchable with the keeper alive (written, then the keeper and the query): ${spread(kept)}`,
		);
		clearInterval(running);
		// It exits 3 s after its last work: the next size's build, or the store's removal, meets no keeper.
		await until(async () => !keeperAlive(storeDir), 60_000, "the keeper's exit");
	}
} finally {
	agent.cleanup();
}
