/** /ponytail: response modes injected as a structured prompt section, persisted per session branch. */
import { join } from "node:path";
import { CONFIG_DIR_NAME, type ExtensionAPI, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type PonytailSettings, resolveSettings, userConfigFile, writeDefaultMode } from "./config.ts";
import {
	type ActiveLevel,
	completePonytailArgs,
	isDeactivationPhrase,
	MODE_ENTRY_TYPE,
	modeFromBranch,
	type PonytailMode,
	parsePonytailArgs,
} from "./modes.ts";
import { condensedPonytailRules, ponytailRules } from "./rules.ts";
import { REVIEW_MARKER, SKILL_COMMANDS, type SkillCommand, sendSkill } from "./skill-commands.ts";
import { badgeText } from "./status.ts";

export { condensedPonytailRules, ponytailRules } from "./rules.ts";
export type { PonytailMode } from "./modes.ts";

const SECTION = "ponytail";
export const PROJECT_CONFIG_NAME = "ponytail.json";

export function registerPonytail(pi: ExtensionAPI): void {
	let mode: PonytailMode = "full";
	let level: PonytailMode | "review" = mode;
	let busy = false;
	let settings: PonytailSettings | undefined;
	const warned = new Set<string>();
	const startWaiters = new Set<() => void>();
	/** Resolves true at the next agent_start, false if none comes (an input handler may swallow the message). */
	const nextRunStarted = (): Promise<boolean> =>
		new Promise((resolve) => {
			const done = (): void => {
				clearTimeout(timer);
				startWaiters.delete(done);
				resolve(true);
			};
			const timer = setTimeout(() => {
				startWaiters.delete(done);
				resolve(false);
			}, 10_000);
			startWaiters.add(done);
		});

	const say = (ctx: ExtensionContext, text: string, kind: "info" | "warning" | "error" = "info"): void => {
		// Print and json modes have no UI; stderr keeps json stdout clean.
		if (ctx.hasUI) ctx.ui.notify(text, kind);
		else process.stderr.write(`${text}\n`);
	};

	const loadSettings = (ctx: ExtensionContext): PonytailSettings => {
		const projectFile = ctx.isProjectTrusted() ? join(ctx.cwd, CONFIG_DIR_NAME, PROJECT_CONFIG_NAME) : undefined;
		const resolved = resolveSettings({ env: process.env, projectFile, userFile: userConfigFile(process.env) });
		for (const warning of resolved.warnings) {
			if (warned.has(warning)) continue;
			warned.add(warning);
			say(ctx, warning, "warning");
		}
		settings = resolved;
		return resolved;
	};

	const syncStatus = (ctx: ExtensionContext): void => {
		if (!ctx.hasUI) return;
		ctx.ui.setStatus(SECTION, settings?.statusBar ? badgeText(ctx.ui.theme, level, busy) : undefined);
	};

	const setMode = (ctx: ExtensionContext, next: PonytailMode, reason: string): void => {
		mode = next;
		level = next;
		pi.appendEntry(MODE_ENTRY_TYPE, { mode: next });
		syncStatus(ctx);
		say(ctx, `ponytail: ${next}${reason ? ` (${reason})` : ""}`);
	};

	const restore = (ctx: ExtensionContext): void => {
		const current = loadSettings(ctx);
		mode = modeFromBranch(ctx.sessionManager.getBranch()) ?? current.defaultMode;
		level = mode;
		syncStatus(ctx);
	};

	// The command log's code loads with the first command: pi's start-up does not need it.
	const logCommand = async (command: string, args: string): Promise<void> => {
		const { appendCommandLog, commandLogFile } = await import("./command-log.ts");
		const file = commandLogFile(process.env);
		if (!file) return;
		try {
			appendCommandLog(file, { command, args: args.trim(), timestamp: new Date().toISOString() });
		} catch {
			// The log is a diagnostic aid; a read-only cache dir must not break the command.
		}
	};

	pi.on("session_start", (event, ctx) => {
		restore(ctx);
		if (event.reason === "startup" && ctx.hasUI && !settings?.quietStartup) say(ctx, `ponytail: ${mode}`);
	});
	pi.on("session_tree", (_event, ctx) => restore(ctx));

	pi.on("input", (event, ctx) => {
		if (isDeactivationPhrase(event.text) && mode !== "off") setMode(ctx, "off", "deactivated by message");
		return { action: "continue" };
	});

	pi.on("before_agent_start", (event) => {
		const review = event.messageType === "user" && event.prompt.startsWith(REVIEW_MARKER);
		const active: ActiveLevel | undefined = review ? "review" : mode === "off" ? undefined : mode;
		level = active ?? "off";
		const sections = event.systemPromptOptions.sections;
		if (!active) delete sections[SECTION];
		else sections[SECTION] = settings?.condensed ? condensedPonytailRules(active) : ponytailRules(active);
	});

	pi.on("agent_start", (_event, ctx) => {
		busy = true;
		for (const waiter of [...startWaiters]) waiter();
		syncStatus(ctx);
	});
	pi.on("agent_settled", (_event, ctx) => {
		busy = false;
		// A review run is one-shot: the badge returns to the stored mode.
		level = mode;
		syncStatus(ctx);
	});

	const handlePonytail = async (args: string, ctx: ExtensionContext): Promise<void> => {
		const parsed = parsePonytailArgs(args);
		const current = loadSettings(ctx);
		switch (parsed.kind) {
			case "error":
				say(ctx, parsed.message, "error");
				return;
			case "on":
				setMode(ctx, current.defaultMode === "off" ? "full" : current.defaultMode, "default");
				return;
			case "set":
				setMode(ctx, parsed.mode, "");
				return;
			case "status":
				say(ctx, `ponytail: current ${mode}, default ${current.defaultMode} (from ${current.source})`);
				return;
			case "default": {
				const file = userConfigFile(process.env);
				try {
					writeDefaultMode(file, parsed.mode);
				} catch (error) {
					say(ctx, `ponytail: default not changed: ${(error as Error).message}`, "error");
					return;
				}
				const after = loadSettings(ctx);
				const note =
					after.source === file
						? ""
						: `; ${after.source} takes precedence, so the default is still ${after.defaultMode}`;
				say(ctx, `ponytail: default ${parsed.mode} written to ${file}${note}`);
				return;
			}
			case "log": {
				const { commandLogFile, formatCommandLog, readCommandLog } = await import("./command-log.ts");
				const file = commandLogFile(process.env);
				say(
					ctx,
					file
						? formatCommandLog(readCommandLog(file, parsed.count))
						: "ponytail: command log is off (PONYTAIL_COMMAND_LOG=0)",
				);
				return;
			}
		}
	};

	pi.registerCommand("ponytail", {
		description: "Ponytail mode: off|lite|full|ultra, status, default <mode>, log [N]",
		getArgumentCompletions: (prefix) => {
			const items = completePonytailArgs(prefix).map((value) => ({ value, label: value }));
			return items.length > 0 ? items : null;
		},
		handler: async (args, ctx) => {
			// Logged after handling so `/ponytail log` lists the commands before it.
			try {
				await handlePonytail(args, ctx);
			} finally {
				await logCommand("ponytail", args);
			}
		},
	});

	for (const [name, description] of Object.entries(SKILL_COMMANDS) as [SkillCommand, string][]) {
		pi.registerCommand(name, {
			description,
			handler: async (args, ctx) => {
				await logCommand(name, args);
				await sendSkill(pi, ctx, name, args, nextRunStarted);
			},
		});
	}
}
