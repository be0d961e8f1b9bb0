/**
 * Runs the real pi binary from node_modules in a throwaway agent dir with the scripted faux model.
 * Everything a test needs to isolate pi lives here: agent dir, HOME, XDG dirs, offline flags.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Message, SystemMessage } from "@earendil-works/pi-ai";
import type { FauxScript } from "./faux-script.ts";
import { procsWithEnv } from "./proc-scan.ts";

// Re-exported: tests and the tmux driver take it from here.
export { waitFor } from "./wait.ts";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const PI_CLI = join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
export const EXTENSION_ENTRY = join(REPO_ROOT, "src/index.ts");
const FAUX_EXTENSION = join(REPO_ROOT, "test-support/faux-model-extension.ts");

export interface TestAgent {
	/** Scratch root: holds the agent dir, HOME, XDG dirs and a default cwd. */
	root: string;
	agentDir: string;
	home: string;
	/** A plain working directory for pi runs (not a git repo). */
	cwd: string;
	env: NodeJS.ProcessEnv;
	writeScript(script: FauxScript): void;
	writeSettings(settings: Record<string, unknown>): void;
	calls(): FauxCall[];
	cleanup(): void;
}

export interface FauxCall {
	pid: number;
	seq: number;
	at: number;
	model: string;
	messages: Message[];
}

export interface CreateAgentOptions {
	script?: FauxScript;
	settings?: Record<string, unknown>;
	env?: NodeJS.ProcessEnv;
	/**
	 * The agent dir where pi keeps it by default, ~/.pi/agent in the test's home: paths under it are shown
	 * as ~/..., as short wherever TMPDIR is (a table that cuts long paths then shows them whole).
	 */
	agentDirInHome?: boolean;
}

const BASE_SETTINGS = {
	defaultProvider: "faux",
	defaultModel: "faux-1",
	retry: { enabled: false },
	quietStartup: true,
};

/** Variables from the developer's shell that would leak real config into a test run. */
const SCRUBBED_PREFIXES = ["PI_", "PONYTAIL_", "AGENT_BOARD_", "XDG_", "OPENAI_", "ANTHROPIC_", "GEMINI_", "TMUX"];

export function createTestAgent(options: CreateAgentOptions = {}): TestAgent {
	const root = mkdtempSync(join(tmpdir(), "pab-test-"));
	const home = join(root, "home");
	const agentDir = options.agentDirInHome ? join(home, ".pi", "agent") : join(root, "agent");
	const cwd = join(root, "work");
	for (const dir of [agentDir, join(agentDir, "extensions"), home, cwd]) mkdirSync(dir, { recursive: true });
	copyFileSync(FAUX_EXTENSION, join(agentDir, "extensions", "faux-model.ts"));
	// A native extension provider without a stored credential only becomes "configured" after an
	// async availability check that races pi's initial model selection ("No models available").
	// A stored key marks the faux provider configured at registration, as for a logged-in user.
	writeFileSync(
		join(agentDir, "auth.json"),
		`${JSON.stringify({ faux: { type: "api_key", key: "faux-test" }, "faux-slow": { type: "api_key", key: "faux-test" }, "faux-stream": { type: "api_key", key: "faux-test" }, "faux-bulk": { type: "api_key", key: "faux-test" } })}\n`,
		{ mode: 0o600 },
	);

	const env: NodeJS.ProcessEnv = {};
	for (const [key, value] of Object.entries(process.env)) {
		if (!SCRUBBED_PREFIXES.some((prefix) => key.startsWith(prefix))) env[key] = value;
	}
	Object.assign(env, {
		HOME: home,
		PI_CODING_AGENT_DIR: agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		XDG_CONFIG_HOME: join(home, ".config"),
		XDG_CACHE_HOME: join(home, ".cache"),
		XDG_STATE_HOME: join(home, ".local/state"),
		// The node that runs the tests (>= 22.19) must also be the node pi and the runner use.
		PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
		...options.env,
	});

	const agent: TestAgent = {
		root,
		agentDir,
		home,
		cwd,
		env,
		writeScript(script) {
			writeFileSync(join(agentDir, "faux-script.json"), JSON.stringify(script));
		},
		writeSettings(settings) {
			writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ ...BASE_SETTINGS, ...settings }));
		},
		calls() {
			return readCalls(agentDir);
		},
		cleanup() {
			// Runners and workers are detached and outlive the pi that started them: end every process
			// that carries this agent's dir before removing it, or a late write makes rmdir fail.
			endProcessesWithEnv(`PI_CODING_AGENT_DIR=${agentDir}`);
			rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
		},
	};
	agent.writeSettings(options.settings ?? {});
	agent.writeScript(options.script ?? { rules: [], fallback: [{ text: "ok" }] });
	return agent;
}

/** SIGKILLs test-owned processes (matched by an env entry only this test's agent sets) until none is left. */
function endProcessesWithEnv(entry: string): void {
	const pause = new Int32Array(new SharedArrayBuffer(4));
	for (let round = 0; round < 50; round += 1) {
		const pids = procsWithEnv([entry]);
		if (pids.length === 0) return;
		for (const pid of pids) {
			try {
				process.kill(pid, "SIGKILL");
			} catch {
				// Already gone.
			}
		}
		Atomics.wait(pause, 0, 0, 50);
	}
}

export function readCalls(agentDir: string): FauxCall[] {
	const dir = join(agentDir, "faux-calls");
	let names: string[];
	try {
		names = readdirSync(dir).filter((name) => name.endsWith(".json") && !name.startsWith("."));
	} catch {
		return [];
	}
	return names
		.sort()
		.map((name) => JSON.parse(readFileSync(join(dir, name), "utf8")) as FauxCall)
		.sort((a, b) => a.at - b.at || a.pid - b.pid || a.seq - b.seq);
}

export interface PiEvent {
	type: string;
	[key: string]: unknown;
}

export interface PiRunResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	/** Parsed JSON records of stdout (json mode), split on "\n" only. */
	events: PiEvent[];
}

export interface RunPiOptions {
	/** Arguments after the binary, e.g. ["--mode", "json", "-p", "--", "hello"]. */
	args: string[];
	cwd?: string;
	env?: NodeJS.ProcessEnv;
	/** Load this package's extension with -e (default true). */
	withExtension?: boolean;
	timeoutMs?: number;
	stdin?: string;
}

/** Runs pi to completion. The timeout is a hang guard that kills pi and fails the call. */
export function runPi(agent: TestAgent, options: RunPiOptions): Promise<PiRunResult> {
	const args = [PI_CLI, ...(options.withExtension === false ? [] : ["-e", EXTENSION_ENTRY]), ...options.args];
	return new Promise((resolvePromise, reject) => {
		const child = spawn(process.execPath, args, {
			cwd: options.cwd ?? agent.cwd,
			env: { ...agent.env, ...options.env },
			stdio: ["pipe", "pipe", "pipe"],
		});
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
		child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
		child.stdin.end(options.stdin ?? "");
		const timer = setTimeout(() => {
			child.kill("SIGKILL");
			reject(
				new Error(
					`pi did not exit within ${options.timeoutMs ?? 45_000} ms\nstderr: ${stderr}\nstdout: ${stdout.slice(-2000)}`,
				),
			);
		}, options.timeoutMs ?? 45_000);
		child.on("error", (error) => {
			clearTimeout(timer);
			reject(error);
		});
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			resolvePromise({ code, signal, stdout, stderr, events: parseJsonLines(stdout) });
		});
	});
}

/** pi's JSONL framing: records end at "\n" only (U+2028/U+2029 are valid inside JSON strings). */
export function parseJsonLines(text: string): PiEvent[] {
	const events: PiEvent[] = [];
	for (const line of text.split("\n")) {
		const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
		if (!trimmed.startsWith("{")) continue;
		try {
			events.push(JSON.parse(trimmed) as PiEvent);
		} catch {
			// Non-JSON noise on stdout is not an event.
		}
	}
	return events;
}

export function systemMessages(call: FauxCall): SystemMessage[] {
	return call.messages.filter((message): message is SystemMessage => message.role === "system");
}

/** The text of one system message as a provider would render it: content, then sections in order. */
export function systemMessageText(message: SystemMessage): string {
	const content = typeof message.content === "string" ? message.content : message.content.map((b) => b.text).join("");
	const sections = Object.values(message.sections ?? {}).filter((value): value is string => typeof value === "string");
	return [content, ...sections].filter(Boolean).join("\n\n");
}

/** Everything the model was told as system text in one request (leading prompt plus later patches). */
export function allSystemText(call: FauxCall): string {
	return systemMessages(call).map(systemMessageText).join("\n\n");
}

export function userTexts(call: FauxCall): string[] {
	return call.messages
		.filter((message) => message.role === "user")
		.map((message) =>
			typeof message.content === "string"
				? message.content
				: message.content.map((block) => (block.type === "text" ? block.text : "")).join(""),
		);
}

export function assistantText(events: PiEvent[]): string {
	const ends = events.filter((event) => event.type === "message_end");
	const texts: string[] = [];
	for (const event of ends) {
		const message = event.message as Message | undefined;
		if (message?.role !== "assistant") continue;
		for (const block of message.content) if (block.type === "text") texts.push(block.text);
	}
	return texts.join("\n");
}
