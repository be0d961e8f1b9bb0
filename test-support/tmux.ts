/**
 * Drives interactive pi inside a private tmux server (its own socket), so a test types keys and
 * reads the screen as a person would.
 */
import { execFileSync } from "node:child_process";
import { EXTENSION_ENTRY, PI_CLI, REPO_ROOT, type TestAgent, waitFor } from "./pi-harness.ts";

export interface TmuxSession {
	socket: string;
	/** Send tmux key names ("Enter", "Escape", "C-c", "Down") or literal text with `literal`. */
	keys(...keys: string[]): void;
	type(text: string): void;
	/** Pastes text as a terminal would: bracketed (ESC[200~ ... ESC[201~) when the app asked for it. */
	paste(text: string): void;
	/** The visible screen, plain text (no colours). */
	screen(): string;
	waitForText(needle: string | RegExp, timeoutMs?: number): Promise<string>;
	waitForGone(needle: string | RegExp, timeoutMs?: number): Promise<string>;
	alive(): boolean;
	kill(): void;
}

export interface StartPiOptions {
	args?: string[];
	cwd?: string;
	env?: NodeJS.ProcessEnv;
	width?: number;
	height?: number;
	withExtension?: boolean;
	/**
	 * Start pi as a newcomer would, from the project's directory through `npm run --prefix <checkout> pi`
	 * (scripts/pi.mjs loads the package itself), not its CLI directly.
	 */
	viaScript?: boolean;
}

let counter = 0;

function tmux(socket: string, args: string[]): string {
	return execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
}

export function startPiInTmux(agent: TestAgent, options: StartPiOptions = {}): TmuxSession {
	counter += 1;
	const socket = `pab-${process.pid}-${counter}`;
	// npm (viaScript) must not look for its own updates: the tests run offline.
	const env = { ...agent.env, ...options.env, TERM: "xterm-256color", npm_config_update_notifier: "false" };
	const envArgs = Object.entries(env)
		.filter((entry): entry is [string, string] => typeof entry[1] === "string")
		.map(([key, value]) => `${key}=${value}`);
	const command = options.viaScript
		? ["npm", "run", "--silent", "--prefix", REPO_ROOT, "pi", "--", ...(options.args ?? [])]
		: [
				process.execPath,
				PI_CLI,
				...(options.withExtension === false ? [] : ["-e", EXTENSION_ENTRY]),
				...(options.args ?? []),
			];
	// argv form: tmux runs the command without a shell.
	tmux(socket, [
		"new-session",
		"-d",
		"-s",
		"main",
		"-x",
		String(options.width ?? 120),
		"-y",
		String(options.height ?? 40),
		"-c",
		options.cwd ?? agent.cwd,
		"env",
		"-i",
		...envArgs,
		...command,
	]);
	tmux(socket, ["set-option", "-t", "main", "remain-on-exit", "on"]);

	const session: TmuxSession = {
		socket,
		keys(...keys) {
			tmux(socket, ["send-keys", "-t", "main", ...keys]);
		},
		type(text) {
			tmux(socket, ["send-keys", "-t", "main", "-l", text]);
		},
		paste(text) {
			tmux(socket, ["set-buffer", "-b", "pab-paste", "--", text]);
			tmux(socket, ["paste-buffer", "-p", "-d", "-b", "pab-paste", "-t", "main"]);
		},
		screen() {
			return tmux(socket, ["capture-pane", "-p", "-t", "main"]);
		},
		async waitForText(needle, timeoutMs = 20_000) {
			return waitFor(
				() => {
					const screen = session.screen();
					return (typeof needle === "string" ? screen.includes(needle) : needle.test(screen)) ? screen : "";
				},
				() => `screen to show ${String(needle)}\n--- last screen ---\n${safeScreen(session)}`,
				timeoutMs,
			);
		},
		async waitForGone(needle, timeoutMs = 20_000) {
			return waitFor(
				() => {
					const screen = session.screen();
					return (typeof needle === "string" ? !screen.includes(needle) : !needle.test(screen)) ? screen : "";
				},
				() => `screen to stop showing ${String(needle)}\n--- last screen ---\n${safeScreen(session)}`,
				timeoutMs,
			);
		},
		alive() {
			try {
				return tmux(socket, ["display-message", "-p", "-t", "main", "#{pane_dead}"]).trim() === "0";
			} catch {
				return false;
			}
		},
		kill() {
			try {
				tmux(socket, ["kill-server"]);
			} catch {
				// Already gone.
			}
		},
	};
	return session;
}

function safeScreen(session: TmuxSession): string {
	try {
		return session.screen();
	} catch (error) {
		return String(error);
	}
}
