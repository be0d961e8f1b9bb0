/**
 * The board's web server as a user starts it: `pi -p "/agent-board serve ..."` (a real pi that exits
 * right after), its login URL read from what pi printed, and raw HTTP requests with any Host, Origin,
 * cookie and CSRF header (fetch would not let a test send a wrong Host).
 */
import { request } from "node:http";
import { liveRecord, type ServerRecord } from "../src/web/web-files.ts";
import { runPi, type TestAgent } from "./pi-harness.ts";

export interface Served {
	login: string;
	base: string;
	port: number;
	record: ServerRecord;
	token: string;
	stdout: string;
}

/** Runs `/agent-board serve <args>` in a real pi and reads the login URL it printed once. */
export async function serveFromPi(
	agent: TestAgent,
	storeDir: string,
	args = "--port 0",
	env: NodeJS.ProcessEnv = {},
): Promise<Served> {
	const run = await runPi(agent, {
		args: ["-p", `/agent-board serve ${args}`],
		env: { AGENT_BOARD_DIR: storeDir, ...env },
		timeoutMs: 120_000,
	});
	if (run.code !== 0) throw new Error(`serve failed (${run.code}): ${run.stderr}\n${run.stdout}`);
	const login = /http:\/\/\S+\/login\?token=([A-Za-z0-9_-]+)/.exec(run.stdout);
	const record = liveRecord(storeDir);
	if (!login || !record)
		throw new Error(`serve printed no login URL or left no live server:\n${run.stdout}\n${run.stderr}`);
	const url = new URL(login[0]);
	return {
		login: login[0],
		base: url.origin,
		port: Number(url.port),
		record,
		token: login[1] ?? "",
		stdout: run.stdout,
	};
}

export interface RawResponse {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	body: string;
}

/** One HTTP request to 127.0.0.1:port with exactly these headers (Host included); a stream is read for a moment only. */
export function rawRequest(
	port: number,
	method: string,
	path: string,
	headers: Record<string, string> = {},
	body?: string,
): Promise<RawResponse> {
	return new Promise((resolve, reject) => {
		const req = request(
			{ host: "127.0.0.1", port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers } },
			(res) => {
				let text = "";
				res.setEncoding("utf8");
				res.on("data", (chunk: string) => (text += chunk));
				const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
				res.on("end", done);
				// An event stream never ends by itself: what came in the first moment is enough.
				if (String(res.headers["content-type"]).startsWith("text/event-stream"))
					setTimeout(() => {
						res.destroy();
						done();
					}, 300);
			},
		);
		req.on("error", reject);
		if (body !== undefined) req.end(body);
		else req.end();
	});
}
