/**
 * Registers /agent-board and wires its three parts: the dashboard (dashboard/) in interactive pi, the
 * plain-text subcommands (subcommands/) everywhere, and what shows outside the board (presence/: footer,
 * strip, notices, the attached-row line). One BoardFeed per pi process feeds all of them, so they
 * never disagree; one DiffCache keeps git off the UI thread. All of it is loaded on first use
 * (loader.ts): the session's start only schedules the footer and strip, after pi's own start.
 */
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { BoardLoader } from "./loader.ts";
import type { AttachRecord } from "./presence/attach.ts";
import type { BoardRuntime } from "./runtime.ts";
import { COMMAND_DESCRIPTION } from "./subcommands/usage.ts";
import { writeWhole } from "./write-whole.ts";

type Parts = Awaited<ReturnType<typeof uiParts>>;

async function uiParts(r: BoardRuntime, load: BoardLoader) {
	const service = await load.service();
	const feed = new r.BoardFeed(() => service);
	const diffCache = new r.DiffCache();
	const overlaps = new r.OverlapIndex(feed, diffCache);
	// OS notifications go straight to the terminal, like pi's notify.ts example.
	const presence = new r.BoardPresence(feed, r.resolveSettings(undefined), (text) => process.stdout.write(text));
	return { r, service, feed, diffCache, overlaps, presence };
}

export function registerBoardUi(pi: ExtensionAPI, load: BoardLoader): void {
	let loaded: Promise<Parts> | undefined;
	const parts = (): Promise<Parts> => (loaded ??= load.runtime().then((r) => uiParts(r, load)));
	let attached: AttachRecord | undefined;
	/** Bumped at each session start and shutdown: a deferred start that lost the race does nothing. */
	let session = 0;

	async function startPresence(ctx: ExtensionContext, mine: number): Promise<void> {
		const { r, service, presence } = await parts();
		const prefs = await r.loadPrefs(service.storeDir);
		const record = await r.loadAttach(service.storeDir);
		if (mine !== session) return;
		presence.settings = r.resolveSettings(prefs.board);
		// A record whose row session is not the one open now is from an earlier switch: not attached.
		attached = record && ctx.sessionManager.getSessionFile() === record.sessionFile ? record : undefined;
		ctx.ui.setStatus(r.ATTACH_STATUS_KEY, attached ? r.attachedStatus(attached) : undefined);
		presence.start(ctx.ui);
	}

	pi.on("session_start", (_event, ctx) => {
		const mine = ++session;
		// A `$` budget's dispatch check asks pi's registry whether the model has cost data.
		load.useModelRegistry(ctx.modelRegistry);
		// Print mode only reads (a `pi -p "/agent-board list"` changes nothing on disk): retention, a write,
		// runs in interactive sessions, at most once a day per store, after startup and out of the session's way.
		if (!ctx.hasUI) return;
		setTimeout(
			() => void load.service().then((service) => load.runtime().then((r) => r.autoGc(service.storeDir))),
			5000,
		).unref();
		// After pi's own start: the footer and strip come from the live summary, a moment later.
		setTimeout(() => void startPresence(ctx, mine).catch(() => undefined), 0);
	});
	pi.on("session_shutdown", async () => {
		session += 1;
		if (!loaded) return;
		const { presence, overlaps, feed } = await loaded;
		presence.stop();
		overlaps.stop();
		feed.stop();
	});
	// After chatting in an attached row's session, its board row is re-read (summary, age, viewed).
	pi.on("agent_end", async () => {
		if (!attached || !loaded) return;
		const { service, feed } = await loaded;
		await service.markViewed(attached.rowId).catch(() => undefined);
		await feed.refresh([attached.rowId]);
	});

	pi.registerCommand("agent-board", {
		description: COMMAND_DESCRIPTION,
		getArgumentCompletions: async (prefix) => {
			const r = await load.runtime();
			const rows = await (await load.service()).list({ includeArchived: true, slim: true }).catch(() => []);
			return r.completeArgs(prefix, rows);
		},
		handler: async (args, ctx) => {
			const say = (text: string, type: Said = "info") => output(ctx, text, type);
			try {
				const r = await load.runtime();
				const service = await load.service();
				if (args.trim()) {
					const parsed = r.parseSubcommand(args);
					if (!parsed.ok) return say(parsed.error, "error");
					if (parsed.name === "back" && !("help" in parsed && parsed.help))
						return await r.goBack(ctx, service, attached);
					// The web server's code loads only when it is used; its login QR code gets a panel in the TUI.
					if ("serve" in parsed)
						return await (await import("../web/serve-command.ts")).serveCommand(
							ctx,
							service.storeDir,
							parsed.serve,
							(text) => say(text),
						);
					return say(
						await r.runSubcommand(service, parsed, ctx.cwd, Date.now(), {
							confirm: ctx.hasUI ? (title, text) => ctx.ui.confirm(title, text) : undefined,
							progress: progressTo(ctx),
						}),
					);
				}
				if (ctx.mode !== "tui")
					return say(r.formatTable(await r.listSupervised(service, { slim: true }), Date.now()));
				const { feed, diffCache, overlaps, presence } = await parts();
				overlaps.start();
				presence.quiet = true;
				const result = await r
					.openBoard(ctx, service, {
						feed,
						diffCache,
						overlaps,
						settings: presence.settings,
						applySettings: (settings) => presence.applySettings(settings),
						attachedId: attached?.rowId,
					})
					.finally(() => {
						presence.quiet = false;
						// Overlaps are the board's: no git for them while it is closed.
						overlaps.stop();
					});
				if (result.kind === "back") await r.goBack(ctx, service, attached);
				else if (result.kind === "attach") await r.attachTo(ctx, service, result.row, attached);
			} catch (error) {
				// A report that says "not ready" is still a report, not an error line.
				if (error instanceof Error && "report" in error && typeof error.report === "string")
					return say(error.report, "failed report");
				say(`agent-board: ${error instanceof Error ? error.message : String(error)}`, "error");
			}
		},
	});
}

/** "failed report": a command's output whose verdict is a failure (a target not ready). */
type Said = "info" | "error" | "failed report";

/**
 * TUI and RPC show text as a notification; print mode writes stdout (errors to stderr); json keeps
 * stdout for events. A headless error or failed report also sets the exit code, so scripts can tell.
 */
function output(ctx: ExtensionCommandContext, text: string, type: Said): void {
	if (type !== "info" && !ctx.hasUI) process.exitCode = 1;
	if (ctx.hasUI) ctx.ui.notify(text, type === "error" ? "error" : "info");
	else if (ctx.mode === "json" || type === "error") writeWhole(2, `${text}\n`);
	// pi redirects process.stdout to stderr in print mode to guard its output; the report is the output.
	else writeWhole(1, `${text}\n`);
}

/**
 * A long command's progress. In the TUI the notice is replaced in place (pi updates a status that is
 * still the last thing shown), the final report replacing it; headless, what it checks goes to stderr
 * as it starts, and the report to the output at the end.
 */
function progressTo(ctx: ExtensionCommandContext): (lines: string[], checking?: string) => void {
	if (ctx.hasUI)
		return (lines, checking) =>
			ctx.ui.notify([...lines, ...(checking ? [`checking ${checking}...`] : [])].join("\n"), "info");
	let said: string | undefined;
	return (_lines, checking) => {
		if (checking === undefined || checking === said) return;
		said = checking;
		writeWhole(2, `checking ${checking}...\n`);
	};
}
