/**
 * Plays the runner's side of the control channel against a real pi worker: spawns
 * `pi --mode json -p --session <file> -e src/index.ts <placeholder>` with fd 3 as a socketpair, as
 * runner/job-runner.mjs does, and records what the worker says on fd 3 and stdout.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Socket } from "node:net";
import { LineSplitter } from "../runner/lines.mjs";
import {
	encodeLine,
	parseWorkerLine,
	PROMPT_PLACEHOLDER,
	type RunnerToWorker,
	type WorkerToRunner,
} from "../runner/protocol.mjs";
import { EXTENSION_ENTRY, parseJsonLines, PI_CLI, waitFor, type PiEvent, type TestAgent } from "./pi-harness.ts";

export interface WorkerProcess {
	child: ChildProcess;
	pid: number;
	argv: string[];
	sessionFile: string;
	/** Everything the worker sent on fd 3, in order, but its opening `ready` (see readySent). */
	lines: WorkerToRunner[];
	/** Whether the worker role said `ready` (first, before anything else). */
	readySent(): boolean;
	/** Lines on fd 3 that are not protocol messages (must stay empty). */
	malformed: string[];
	events(): PiEvent[];
	stderr(): string;
	send(message: RunnerToWorker): void;
	/** Close our end of fd 3, as a dying runner would. */
	closeChannel(): void;
	waitForLine<T extends WorkerToRunner>(predicate: (line: WorkerToRunner) => line is T, what: string): Promise<T>;
	waitForEvent(predicate: (event: PiEvent) => boolean, what: string): Promise<PiEvent>;
	/** Resolves on exit; rejects (and kills pi) after the hang guard. */
	exited(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	kill(): void;
}

export interface SpawnWorkerOptions {
	env?: NodeJS.ProcessEnv;
	/** Extra extensions, loaded after this package. */
	extensions?: string[];
	/** Start without fd 3 and without AGENT_BOARD_CONTROL_FD. */
	noChannel?: boolean;
	/** The message argument instead of the placeholder (workers without a channel). */
	promptArg?: string;
	/** Resume this session file instead of a new one. */
	sessionFile?: string;
}

export function spawnWorker(agent: TestAgent, options: SpawnWorkerOptions = {}): WorkerProcess {
	const sessionFile =
		options.sessionFile ?? join(agent.root, `s-${Date.now()}-${Math.random().toString(36).slice(2)}.jsonl`);
	const extensionArgs = [EXTENSION_ENTRY, ...(options.extensions ?? [])].flatMap((path) => ["-e", path]);
	const argv = [
		PI_CLI,
		...extensionArgs,
		"--mode",
		"json",
		"-p",
		"--session",
		sessionFile,
		options.promptArg ?? PROMPT_PLACEHOLDER,
	];
	const env: NodeJS.ProcessEnv = { ...agent.env, AGENT_BOARD_WORKER: "1", ...options.env };
	if (!options.noChannel) env.AGENT_BOARD_CONTROL_FD = "3";
	const child = spawn(process.execPath, argv, {
		cwd: agent.cwd,
		env,
		stdio: options.noChannel ? ["ignore", "pipe", "pipe"] : ["ignore", "pipe", "pipe", "pipe"],
	});
	if (child.pid === undefined) throw new Error("pi did not start");
	let stdout = "";
	let stderr = "";
	child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
	child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
	const lines: WorkerToRunner[] = [];
	const malformed: string[] = [];
	let ready = false;
	const channel = options.noChannel ? undefined : (child.stdio[3] as Socket);
	if (channel) {
		const splitter = new LineSplitter();
		channel.setEncoding("utf8");
		channel.on("data", (chunk: string) => {
			for (const line of splitter.push(chunk)) {
				const parsed = parseWorkerLine(line);
				if (parsed?.type === "ready" && !ready && lines.length === 0) ready = true;
				else if (parsed) lines.push(parsed);
				else malformed.push(line);
			}
		});
		// EPIPE after the worker exited is the worker's business, not a test failure.
		channel.on("error", () => {});
	}
	const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
		child.on("exit", (code, signal) => resolve({ code, signal }));
	});
	const events = (): PiEvent[] => parseJsonLines(stdout);
	return {
		child,
		pid: child.pid,
		argv,
		sessionFile,
		lines,
		readySent: () => ready,
		malformed,
		events,
		stderr: () => stderr,
		send(message) {
			if (!channel) throw new Error("no channel");
			channel.write(encodeLine(message));
		},
		closeChannel() {
			channel?.destroy();
		},
		waitForLine(predicate, what) {
			return waitFor(
				() => lines.find(predicate),
				`${what} on fd 3 (got ${JSON.stringify(lines)}; stderr: ${stderr})`,
			);
		},
		waitForEvent(predicate, what) {
			return waitFor(() => events().find(predicate), `${what} (stderr: ${stderr})`);
		},
		async exited(timeoutMs = 30_000) {
			let timer: NodeJS.Timeout | undefined;
			const guard = new Promise<never>((_, reject) => {
				timer = setTimeout(() => {
					child.kill("SIGKILL");
					reject(
						new Error(
							`pi did not exit within ${timeoutMs} ms\nstderr: ${stderr}\nstdout: ${stdout.slice(-2000)}`,
						),
					);
				}, timeoutMs);
			});
			try {
				return await Promise.race([exit, guard]);
			} finally {
				clearTimeout(timer);
			}
		},
		kill() {
			if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
		},
	};
}

export function isReceipt(id: string) {
	return (line: WorkerToRunner): line is Extract<WorkerToRunner, { type: "receipt" }> =>
		line.type === "receipt" && line.id === id;
}

export function isClosed(line: WorkerToRunner): line is Extract<WorkerToRunner, { type: "closed" }> {
	return line.type === "closed";
}

export function toolStarted(name: string) {
	return (event: PiEvent): boolean => event.type === "tool_execution_start" && event.toolName === name;
}

/** Command lines of every process we can read, NUL separators turned into spaces. */
export function allCommandLines(): Array<{ pid: number; cmdline: string }> {
	const result: Array<{ pid: number; cmdline: string }> = [];
	for (const name of readdirSync("/proc")) {
		if (!/^\d+$/.test(name)) continue;
		try {
			result.push({
				pid: Number(name),
				cmdline: readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" "),
			});
		} catch {
			// Gone meanwhile.
		}
	}
	return result;
}
