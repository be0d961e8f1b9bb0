// The runner's end of the worker's fd 3 socketpair: JSON lines both ways.
// Worker output is untrusted: anything that is not a well-formed protocol object is ignored.
import { LineSplitter } from "./lines.mjs";
import { encodeLine, parseWorkerLine } from "./protocol.mjs";

/**
 * @param {import("node:stream").Duplex | null | undefined} socket
 * @param {(report: import("./protocol.mjs").WorkerToRunner) => void} onReport
 */
export function openWorkerLink(socket, onReport) {
	// A worker that never ends a line must not grow the runner without bound.
	const lines = new LineSplitter({ maxLine: 1024 * 1024 });
	let open = !!socket;
	if (socket) {
		socket.setEncoding("utf8");
		socket.on("data", (/** @type {string} */ chunk) => {
			for (const line of lines.push(chunk)) {
				const report = parseWorkerLine(line);
				if (report) onReport(report);
			}
		});
		socket.on("error", () => {
			open = false;
		});
		socket.on("close", () => {
			open = false;
		});
	}
	return {
		/** @param {import("./protocol.mjs").RunnerToWorker} message */
		send(message) {
			if (!socket || !open) return false;
			try {
				socket.write(encodeLine(message));
				return true;
			} catch {
				return false;
			}
		},
		close() {
			open = false;
			socket?.destroy();
		},
	};
}
