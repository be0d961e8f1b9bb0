// The runner's end of the worker's fd 3 socketpair: JSON lines both ways, split on "\n" only.
// Worker output is untrusted: anything that is not a well-formed protocol object is ignored.

/**
 * @typedef {{ type: "receipt", id: string, status: "delivered" | "rejected", as?: "steer" | "followUp" | "answer", reason?: string } | { type: "closed" }} WorkerReport
 */

/** @param {unknown} value @returns {WorkerReport | undefined} */
export function parseReport(value) {
	const v = /** @type {Record<string, unknown>} */ (value);
	if (!v || typeof v !== "object") return undefined;
	if (v.type === "closed") return { type: "closed" };
	if (v.type !== "receipt" || typeof v.id !== "string") return undefined;
	if (v.status !== "delivered" && v.status !== "rejected") return undefined;
	const as = v.as === "steer" || v.as === "followUp" || v.as === "answer" ? v.as : undefined;
	return { type: "receipt", id: v.id, status: v.status, as, reason: typeof v.reason === "string" ? v.reason.slice(0, 500) : undefined };
}

/**
 * @param {import("node:stream").Duplex | null | undefined} socket
 * @param {(report: WorkerReport) => void} onReport
 */
export function openWorkerLink(socket, onReport) {
	let buffer = "";
	let open = !!socket;
	if (socket) {
		socket.setEncoding("utf8");
		socket.on("data", (/** @type {string} */ chunk) => {
			buffer += chunk;
			// A worker that never ends a line must not grow the runner without bound.
			if (buffer.length > 1024 * 1024) buffer = "";
			let index;
			while ((index = buffer.indexOf("\n")) >= 0) {
				const line = buffer.slice(0, index);
				buffer = buffer.slice(index + 1);
				let parsed;
				try {
					parsed = JSON.parse(line);
				} catch {
					continue;
				}
				const report = parseReport(parsed);
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
		/** @param {Record<string, unknown>} message */
		send(message) {
			if (!socket || !open) return false;
			try {
				socket.write(`${JSON.stringify(message)}\n`);
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
