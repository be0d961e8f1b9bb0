/**
 * Registers /agent-board: the interactive dashboard in TUI mode, a plain table or scripting
 * subcommands elsewhere. One BoardFeed per pi process feeds the dashboard, the footer status and the
 * below-editor strip (BoardPresence), so they never disagree; one DiffCache keeps git off the UI thread.
 */
import { homedir } from "node:os";
import { type ExtensionAPI, type ExtensionCommandContext, type ExtensionContext, renderDiff } from "@earendil-works/pi-coding-agent";
import type { BoardService } from "../types.ts";
import { writeWhole } from "../write-whole.ts";
import { type AttachRecord, clearAttach, loadAttach, saveAttach } from "./attach.ts";
import { BoardFeed } from "./board-feed.ts";
import { Dashboard, type DashboardResult } from "./dashboard.ts";
import { readRowDiff } from "./diff.ts";
import { DiffCache } from "./diff-cache.ts";
import { resolveSettings } from "./notify.ts";
import { loadPrefs, savePrefs } from "./prefs.ts";
import { completeArgs, parseSubcommand, runSubcommand } from "./subcommands.ts";
import { formatTable } from "./table.ts";
import { readTranscript } from "./transcript.ts";
import { BoardPresence } from "./watcher.ts";

export function registerDashboard(pi: ExtensionAPI, getService: () => BoardService): void {
	const feed = new BoardFeed(getService);
	const diffCache = new DiffCache();
	// OS notifications go straight to the terminal, like pi's notify.ts example.
	const presence = new BoardPresence(feed, resolveSettings(undefined), (text) => process.stdout.write(text));
	let attached: AttachRecord | undefined;

	pi.on("session_start", async (_event, ctx) => {
		if (!ctx.hasUI) return;
		const storeDir = getService().storeDir;
		const prefs = await loadPrefs(storeDir);
		presence.settings = resolveSettings(prefs.board);
		attached = await loadAttach(storeDir);
		// A record whose row session is not the one open now is from an earlier switch: not attached.
		if (attached && ctx.sessionManager.getSessionFile() !== attached.sessionFile) attached = undefined;
		presence.start(ctx.ui);
	});
	pi.on("session_shutdown", () => {
		presence.stop();
		feed.stop();
	});
	// After chatting in an attached row's session, its board row is re-read (summary, age, viewed).
	pi.on("agent_end", async () => {
		if (!attached) return;
		await getService().markViewed(attached.rowId).catch(() => undefined);
		await feed.refresh([attached.rowId]);
	});

	pi.registerCommand("agent-board", {
		description: "Board of background agents: dispatch, watch, reply, attach (list|dispatch|stop|archive|unarchive|reply|show|back)",
		getArgumentCompletions: async (prefix) => {
			const rows = await getService()
				.list({ includeArchived: true })
				.catch(() => []);
			return completeArgs(prefix, rows);
		},
		handler: async (args, ctx) => {
			const say = (text: string, type: "info" | "error" = "info") => output(ctx, text, type);
			try {
				if (args.trim() === "back") return await goBack(ctx, getService(), attached);
				if (args.trim()) {
					const parsed = parseSubcommand(args);
					if (!parsed.ok) return say(parsed.error, "error");
					return say(await runSubcommand(getService(), parsed, ctx.cwd, Date.now(), { confirm: ctx.hasUI ? (title, text) => ctx.ui.confirm(title, text) : undefined }));
				}
				if (ctx.mode !== "tui") return say(formatTable(await getService().list(), Date.now()));
				await openDashboard(ctx, getService(), { feed, presence, diffCache, attached });
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
		writeWhole(2, `${text}\n`);
		if (type === "error") process.exitCode = 1;
	}
	// pi redirects process.stdout to stderr in print mode to guard its output; the table is the output.
	else writeWhole(1, `${text}\n`);
}

function modelChoices(ctx: ExtensionCommandContext): string[] {
	const scoped = ctx.scopedModels.map((entry) => `${entry.model.provider}/${entry.model.id}`);
	if (scoped.length > 0) return scoped;
	return ctx.modelRegistry.getAvailable().map((model) => `${model.provider}/${model.id}`);
}

interface Shared {
	feed: BoardFeed;
	presence: BoardPresence;
	diffCache: DiffCache;
	attached: AttachRecord | undefined;
}

async function openDashboard(ctx: ExtensionCommandContext, service: BoardService, shared: Shared): Promise<void> {
	const prefs = await loadPrefs(service.storeDir);
	const models = modelChoices(ctx);
	shared.presence.quiet = true;
	let result: DashboardResult;
	try {
		result = await ctx.ui.custom<DashboardResult>((tui, theme, keybindings, done) => {
			const dashboard = new Dashboard({
				service,
				feed: shared.feed,
				tui,
				theme,
				keys: keybindings,
				requestRender: () => tui.requestRender(),
				// Stop ticking the moment the board closes, whatever pi does with the component after.
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
				settings: shared.presence.settings,
				saveSettings: (settings) => {
					prefs.board = settings;
					shared.presence.applySettings(settings);
					void savePrefs(service.storeDir, prefs).catch(() => undefined);
				},
				readTranscript: (row) => readTranscript(row.sessionFile),
				readDiff: readRowDiff,
				renderDiff: (text) => renderDiff(text),
				diffCache: shared.diffCache,
				attachedId: shared.attached?.rowId,
				canGoBack: shared.attached !== undefined,
			});
			void dashboard.start();
			return dashboard;
		});
	} finally {
		shared.presence.quiet = false;
	}
	if (result.kind === "back") return goBack(ctx, service, shared.attached);
	if (result.kind !== "attach") return;
	// Only plain data crosses the switch: the old ctx is stale once the new session starts.
	const { id, name, sessionFile } = result.row;
	const from = shared.attached?.from ?? ctx.sessionManager.getSessionFile();
	await service.markViewed(id).catch(() => undefined);
	if (from) await saveAttach(service.storeDir, { rowId: id, rowName: name, sessionFile, from, at: Date.now() });
	const switched = await ctx.switchSession(sessionFile, {
		withSession: async (newCtx) => {
			newCtx.ui.notify(`Attached to board row ${name}. /agent-board back returns to your session.`, "info");
		},
	});
	if (switched.cancelled) {
		await clearAttach(service.storeDir);
		ctx.ui.notify(`Attach to ${name} was cancelled`, "warning");
	}
}

/** Switches back to the session we attached from, with its history. */
async function goBack(ctx: ExtensionCommandContext, service: BoardService, attached: AttachRecord | undefined): Promise<void> {
	const record = attached ?? (await loadAttach(service.storeDir));
	if (!record) {
		notify(ctx, "agent-board: not attached to a board row; nothing to go back to", "error");
		return;
	}
	await service.markViewed(record.rowId).catch(() => undefined);
	const switched = await ctx.switchSession(record.from, {
		withSession: async (newCtx) => {
			newCtx.ui.notify(`Back from board row ${record.rowName}`, "info");
		},
	});
	if (!switched.cancelled) await clearAttach(service.storeDir);
}

function notify(ctx: ExtensionContext, text: string, type: "info" | "error"): void {
	if (ctx.hasUI) ctx.ui.notify(text, type);
	else process.stderr.write(`${text}\n`);
}
