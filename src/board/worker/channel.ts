/**
 * The worker's end of the control socketpair (fd named by AGENT_BOARD_CONTROL_FD): JSON lines in and
 * out. The socket is unref'd so it never keeps pi alive by itself; hold() refs it while something must
 * wait for the runner (the prompt).
 */
import { Socket } from "node:net";
import { LineSplitter } from "../../../runner/lines.mjs";
import {
	CONTROL_FD_ENV,
	encodeLine,
	parseRunnerLine,
	type InvalidLine,
	type RunnerToWorker,
	type WorkerToRunner,
} from "../../../runner/protocol.mjs";

export interface ChannelHandlers {
	onLine(message: RunnerToWorker | InvalidLine): void;
	/** EOF or an error: the runner is gone. Called once. */
	onEnd(): void;
}

export interface ControlChannel {
	send(message: WorkerToRunner): void;
	hold(): () => void;
}

/** The fd number from the environment, or undefined for no channel (a worker started without a runner). */
export function controlFd(env: NodeJS.ProcessEnv): number | undefined {
	const raw = env[CONTROL_FD_ENV];
	if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
	const fd = Number(raw);
	return fd >= 3 ? fd : undefined;
}

export function openControlChannel(fd: number, handlers: ChannelHandlers): ControlChannel | undefined {
	let socket: Socket;
	try {
		socket = new Socket({ fd, readable: true, writable: true });
	} catch {
		return undefined;
	}
	let ended = false;
	let holds = 0;
	const end = (): void => {
		if (ended) return;
		ended = true;
		handlers.onEnd();
	};
	const splitter = new LineSplitter();
	socket.setEncoding("utf8");
	socket.on("data", (chunk: string) => {
		for (const line of splitter.push(chunk)) handlers.onLine(parseRunnerLine(line));
	});
	socket.on("end", end);
	socket.on("close", end);
	// EPIPE/ECONNRESET: the runner died; same as EOF.
	socket.on("error", end);
	socket.unref();
	return {
		send(message) {
			if (ended || socket.destroyed) return;
			socket.write(encodeLine(message));
		},
		hold() {
			holds += 1;
			socket.ref();
			let released = false;
			return () => {
				if (released) return;
				released = true;
				holds -= 1;
				if (holds === 0) socket.unref();
			};
		},
	};
}
