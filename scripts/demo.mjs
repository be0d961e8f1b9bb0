#!/usr/bin/env node
// `npm run demo`: try the agent board with no API key. Creates a throwaway agent dir with a
// built-in scripted demo model, seeds three board rows (one finished, one asking a question, one
// still working), and starts interactive pi with this package. Everything is removed on exit
// unless --keep is given.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { sheetLines } from "./demo-sheet.mjs";
import { ensureNode22 } from "./node22.mjs";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const piCli = join(repo, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
const keep = process.argv.includes("--keep");

// On the machine's older Node (20), re-run under the same cached Node 22 that `npm test` uses.
ensureNode22(fileURLToPath(import.meta.url), process.argv.slice(2));

const root = mkdtempSync(join(tmpdir(), "agent-board-demo-"));
const agentDir = join(root, "agent");
const work = join(root, "demo-project");
mkdirSync(join(agentDir, "extensions"), { recursive: true });
mkdirSync(work, { recursive: true });

// A linked worktree's git dir differs from the common one: only there does the demo agent write a file.
const WRITE_IN_WORKTREE = `if [ "$(git rev-parse --path-format=absolute --git-dir 2>/dev/null)" != "$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" ]; then printf '# Greeting\\n\\nHello from attempt %s.\\n' "$AGENT_BOARD_ROW" > GREETING.md && echo "wrote GREETING.md"; else echo "read README.md"; fi`;
// The scripted model: the same provider the tests use, with demo answers keyed on words in the prompt.
copyFileSync(join(repo, "test-support/faux-model-extension.ts"), join(agentDir, "extensions", "demo-model.ts"));
const script = {
	rules: [
		{
			match: "database",
			steps: [
				{
					delayMs: 1500,
					then: {
						toolCall: {
							name: "ask_user",
							args: { question: "Which database should the cache use: Postgres or SQLite?" },
						},
					},
				},
				{ text: "Noted. I will wire the cache to the database you picked." },
			],
		},
		{
			match: "slow",
			steps: [{ delayMs: 45_000, then: { text: "Finished the slow refactor: 12 files touched, tests green." } }],
		},
		{ match: "fail", steps: [{ delayMs: 1500, then: { error: "demo model: simulated provider outage" } }] },
	],
	fallback: [
		// In a worktree of its own (an attempt) the change is real, so compare, merge and keep have work to show.
		{ delayMs: 1500, then: { toolCall: { name: "bash", args: { command: WRITE_IN_WORKTREE } } } },
		{
			delayMs: 1500,
			then: {
				text: "Done. I read the project, made the change and ran the tests: all 42 pass.\n\nSummary: the change is small and self-contained.",
			},
		},
	],
};
writeFileSync(join(agentDir, "faux-script.json"), `${JSON.stringify(script, null, 2)}\n`);
writeFileSync(
	join(agentDir, "settings.json"),
	`${JSON.stringify({ defaultProvider: "faux", defaultModel: "faux-1", retry: { enabled: false }, quietStartup: true }, null, 2)}\n`,
);
writeFileSync(join(agentDir, "auth.json"), `${JSON.stringify({ faux: { type: "api_key", key: "demo" } })}\n`, {
	mode: 0o600,
});
writeFileSync(join(work, "README.md"), "# demo project\n\nA throwaway project for the agent board demo.\n");
// A git repo lets the demo try worktree mode (`d` shows the diff of a worktree row).
const git = (args) => spawnSync("git", args, { cwd: work, stdio: "ignore" });
if (git(["init", "-q"]).status === 0) {
	git(["add", "."]);
	git(["-c", "user.name=demo", "-c", "user.email=demo@example.com", "commit", "-q", "-m", "demo project"]);
}

const env = {
	...process.env,
	PI_CODING_AGENT_DIR: agentDir,
	PI_OFFLINE: "1",
	PI_SKIP_VERSION_CHECK: "1",
	PI_TELEMETRY: "0",
	PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
};
for (const key of Object.keys(env)) if (key.startsWith("AGENT_BOARD_")) delete env[key];
const piArgs = [piCli, "-e", join(repo, "src/index.ts")];

// pi clears the screen when it starts: the sheet is shown again inside pi, as an entry in the chat
// (a notice would be replaced by the next one), laid out for the terminal's width.
const sheetModule = pathToFileURL(join(repo, "scripts/demo-sheet.mjs")).href;
writeFileSync(
	join(agentDir, "extensions", "demo-keys.ts"),
	[
		`import { sheetLines } from ${JSON.stringify(sheetModule)};`,
		"export default function (pi) {",
		'\tpi.registerEntryRenderer("demo-keys", (entry, _options, theme) => ({ render: (width) => ["", ...sheetLines(Math.max(20, width - 2), entry.data.dir).map((line) => ` ${theme.fg("accent", line)}`), ""], invalidate() {} }));',
		`\tpi.on("session_start", (event, ctx) => { if (event.reason === "startup" && ctx.hasUI) pi.appendEntry("demo-keys", { dir: ${JSON.stringify(root)} }); });`,
		"}",
		"",
	].join("\n"),
);

// Rows are dispatched through the board's engine directly: no pi start per row, and each step is shown.
// Node >= 22.18 strips types by default, so the engine's TypeScript loads as is.
const { createBoardService } = await import("../src/board/engine/service.ts");
const service = createBoardService({
	storeDir: join(agentDir, "agent-board"),
	env,
	piCommand: [process.execPath, piCli],
});
const seeds = [
	"Summarise the README for a new contributor",
	"Add a cache layer; ask me which database to use",
	"A slow refactor of the parser",
];
for (const [i, prompt] of seeds.entries()) {
	await service.dispatch({ prompt, cwd: work });
	console.log(`Seeding the demo board: ${i + 1}/${seeds.length} ${prompt}`);
}
console.log(`\n${sheetLines(Math.max(20, (process.stdout.columns || 80) - 1), root).join("\n")}\n\nStarting pi...`);

const child = spawn(process.execPath, piArgs, { cwd: work, env, stdio: "inherit" });
const forward = (signal) => child.kill(signal);
process.on("SIGTERM", forward);
process.on("SIGHUP", forward);
child.on("exit", async (code) => {
	if (!keep) {
		// Background agents outlive pi by design; the demo's must not outlive their deleted dir.
		console.log("Stopping the demo's background agents...");
		await stopLiveRows();
		console.log(`Removing ${root}...`);
		// A runner's last writes can land during the removal: retry for a while rather than leave the dir.
		let failure;
		for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
			try {
				rmSync(root, { recursive: true, force: true, maxRetries: 4, retryDelay: 100 });
				failure = undefined;
				break;
			} catch (error) {
				failure = error;
			}
		}
		if (failure)
			console.error(
				`demo: could not remove ${root}: ${failure instanceof Error ? failure.message : String(failure)}`,
			);
		else console.log("Demo removed.");
	} else console.log(`Demo files kept in ${root}`);
	process.exit(code ?? 0);
});

async function stopLiveRows() {
	try {
		const live = (await service.list({ includeArchived: true })).filter((row) => row.alive);
		// Stops go out together; each waits only for its own run to end.
		await Promise.all(live.map((row) => service.stop(row.id).catch(() => undefined)));
		const deadline = Date.now() + 60_000;
		while (Date.now() < deadline && (await service.list({ includeArchived: true })).some((row) => row.alive))
			await new Promise((r) => setTimeout(r, 100));
	} catch (error) {
		console.error(
			`demo: could not stop background agents: ${error instanceof Error ? error.message : String(error)}`,
		);
	}
}
