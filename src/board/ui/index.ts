/**
 * Registers /agent-board: the interactive dashboard in TUI mode, a plain table or scripting
 * subcommands elsewhere, plus the footer-status/notification watcher.
 */
import { writeSync } from "node:fs";
import { homedir } from "node:os";
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { BoardService } from "../types.ts";
import { Dashboard, type DashboardResult } from "./dashboard.ts";
import { readRowDiff } from "./diff.ts";
import { loadPrefs, savePrefs } from "./prefs.ts";
import { completeArgs, parseSubcommand, runSubcommand } from "./subcommands.ts";
import { formatTable } from "./table.ts";
import { readTranscript } from "./transcript.ts";
import { BoardWatcher } from "./watcher.ts";

export function registerDashboard(pi: ExtensionAPI, getService: () => BoardService): void {
	const watcher = new BoardWatcher(getService);

	pi.on("session_start", (_event, ctx) => {
		if (ctx.hasUI) watcher.start(ctx.ui);
	});
	pi.on("session_shutdown", () => watcher.stop());

	pi.registerCommand("agent-board", {
		description: "Board of background agents: dispatch, watch, reply, attach (list|dispatch|stop|archive|unarchive|reply|show)",
		getArgumentCompletions: async (prefix) => {
			const rows = await getService()
				.list({ includeArchived: true })
				.catch(() => []);
			return completeArgs(prefix, rows);
		},
		handler: async (args, ctx) => {
			const say = (text: string, type: "info" | "error" = "info") => output(ctx, text, type);
			try {
				if (args.trim()) {
					const parsed = parseSubcommand(args);
					if (!parsed.ok) return say(parsed.error, "error");
					return say(await runSubcommand(getService(), parsed, ctx.cwd, Date.now(), { confirm: ctx.hasUI ? (title, text) => ctx.ui.confirm(title, text) : undefined }));
				}
				if (ctx.mode !== "tui") return say(formatTable(await getService().list(), Date.now()));
				await openDashboard(ctx, getService(), watcher);
			} catch (error) {
				say(`agent-board: ${error instanceof Error ? error.message : String(error)}`, "error");
			}
		},
	});
}

/**
 * TUI and RPC show text as a notification; print mode writes stdout (errors to stderr); json keeps
 * stdout for events. A headless error also sets the exit code, so scripts can tell it failed.
 */
function output(ctx: ExtensionCommandContext, text: string, type: "info" | "error"): void {
	if (ctx.hasUI) ctx.ui.notify(text, type);
	else if (ctx.mode === "json" || type === "error") {
		process.stderr.write(`${text}\n`);
		if (type === "error") process.exitCode = 1;
	}
	// pi redirects process.stdout to stderr in print mode to guard its output; the table is the output.
	else writeSync(1, `${text}\n`);
}

function modelChoices(ctx: ExtensionCommandContext): string[] {
	const scoped = ctx.scopedModels.map((entry) => `${entry.model.provider}/${entry.model.id}`);
	if (scoped.length > 0) return scoped;
	return ctx.modelRegistry.getAvailable().map((model) => `${model.provider}/${model.id}`);
}

async function openDashboard(ctx: ExtensionCommandContext, service: BoardService, watcher: BoardWatcher): Promise<void> {
	const prefs = await loadPrefs(service.storeDir);
	const models = modelChoices(ctx);
	watcher.quiet = true;
	let result: DashboardResult;
	try {
		result = await ctx.ui.custom<DashboardResult>((tui, theme, keybindings, done) => {
			const dashboard = new Dashboard({
				service,
				theme,
				keys: keybindings,
				requestRender: () => tui.requestRender(),
				// Stop polling the moment the board closes, whatever pi does with the component after.
				done: (value) => {
					dashboard.dispose();
					done(value);
				},
				height: () => tui.terminal.rows,
				cwd: ctx.cwd,
				home: homedir(),
				models,
				prefs,
				savePrefs: (next) => savePrefs(service.storeDir, next),
				readTranscript: (row) => readTranscript(row.sessionFile),
				readDiff: readRowDiff,
			});
			void dashboard.start();
			return {
				render: (width: number) => dashboard.render(width),
				invalidate: () => dashboard.invalidate(),
				handleInput: (data: string) => dashboard.handleInput(data),
				dispose: () => dashboard.dispose(),
			};
		});
	} finally {
		watcher.quiet = false;
	}
	if (result.kind !== "attach") return;
	// Only plain data crosses the switch: the old ctx is stale once the new session starts.
	const { id, name, sessionFile } = result.row;
	await service.markViewed(id).catch(() => undefined);
	const switched = await ctx.switchSession(sessionFile, {
		withSession: async (newCtx) => {
			newCtx.ui.notify(`Attached to board row ${name}`, "info");
		},
	});
	if (switched.cancelled) ctx.ui.notify(`Attach to ${name} was cancelled`, "warning");
}
