/** A loopback HTTP receiver for notifier tests: records every request, answers 200 (or 503 while down). */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
	path: string;
	headers: IncomingHttpHeaders;
	body: string;
	status: number;
	at: number;
}

export interface Receiver {
	base: string;
	got: Received[];
	/** The requests it answered 2xx, the ones a sender counts as delivered. */
	delivered(path?: string): Received[];
	down: boolean;
	close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
	const got: Received[] = [];
	const receiver: Receiver = {
		base: "",
		got,
		down: false,
		delivered: (path) => got.filter((r) => r.status < 300 && (path === undefined || r.path.startsWith(path))),
		close: () => new Promise((resolve) => server.close(() => resolve())),
	};
	const server: Server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on("data", (chunk: Buffer) => chunks.push(chunk));
		req.on("end", () => {
			const status = receiver.down ? 503 : 200;
			got.push({
				path: req.url ?? "",
				headers: req.headers,
				body: Buffer.concat(chunks).toString("utf8"),
				status,
				at: Date.now(),
			});
			res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "down");
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	receiver.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return receiver;
}
