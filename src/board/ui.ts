/**
 * Registers /agent-board and wires its three parts: the dashboard (dashboard/) in interactive pi, the
 * plain-text subcommands (subcommands/) everywhere, and what shows outside the board (presence/: footer,
 * strip, notices, the attached-row line). One BoardFeed per pi process feeds all of them, so they
 * never disagree; one DiffCache keeps git off the UI thread.
 */
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { completeArgs, parseSubcommand, runSubcommand } from "./subcommands/subcommands.ts";
import { formatTable } from "./subcommands/table.ts";
import { COMMAND_DESCRIPTION } from "./subcommands/usage.ts";
import { openBoard } from "./dashboard/open-board.ts";
import { writeWhole } from "./write-whole.ts";
import { ATTACH_STATUS_KEY, type AttachRecord, attachedStatus, attachTo, goBack, loadAttach } from "./presence/attach.ts";
import { resolveSettings } from "./presence/notify.ts";
import { BoardPresence } from "./presence/presence.ts";
import type { BoardService } from "./types.ts";
import { DiffCache } from "./view-model/diff-cache.ts";
import { BoardFeed } from "./view-model/feed.ts";
import { OverlapIndex } from "./view-model/overlap-index.ts";
import { loadPrefs } from "./view-model/prefs.ts";

export function registerBoardUi(pi: ExtensionAPI, getService: () => BoardService): void {
	const feed = new BoardFeed(getService);
	const diffCache = new DiffCache();
	const overlaps = new OverlapIndex(feed, diffCache);
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
		ctx.ui.setStatus(ATTACH_STATUS_KEY, attached ? attachedStatus(attached) : undefined);
		presence.start(ctx.ui);
	});
	pi.on("session_shutdown", () => {
		presence.stop();
		overlaps.stop();
		feed.stop();
	});
	// After chatting in an attached row's session, its board row is re-read (summary, age, viewed).
	pi.on("agent_end", async () => {
		if (!attached) return;
		await getService().markViewed(attached.rowId).catch(() => undefined);
		await feed.refresh([attached.rowId]);
	});

	pi.registerCommand("agent-board", {
		description: COMMAND_DESCRIPTION,
		getArgumentCompletions: async (prefix) => {
			const rows = await getService()
				.list({ includeArchived: true })
				.catch(() => []);
			return completeArgs(prefix, rows);
		},
		handler: async (args, ctx) => {
			const say = (text: string, type: "info" | "error" = "info") => output(ctx, text, type);
			const service = getService();
			try {
				if (args.trim()) {
					const parsed = parseSubcommand(args);
					if (!parsed.ok) return say(parsed.error, "error");
					if (parsed.name === "back" && !("help" in parsed && parsed.help)) return await goBack(ctx, service, attached);
					return say(await runSubcommand(service, parsed, ctx.cwd, Date.now(), { confirm: ctx.hasUI ? (title, text) => ctx.ui.confirm(title, text) : undefined }));
				}
				if (ctx.mode !== "tui") return say(formatTable(await service.list(), Date.now()));
				overlaps.start();
				presence.quiet = true;
				const result = await openBoard(ctx, service, {
					feed,
					diffCache,
					overlaps,
					settings: presence.settings,
					applySettings: (settings) => presence.applySettings(settings),
					attachedId: attached?.rowId,
				}).finally(() => {
					presence.quiet = false;
					// Overlaps are the board's: no git for them while it is closed.
					overlaps.stop();
				});
				if (result.kind === "back") await goBack(ctx, service, attached);
				else if (result.kind === "attach") await attachTo(ctx, service, result.row, attached);
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
