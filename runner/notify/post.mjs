// One POST to a receiver (node:http/https), with a deadline. Its outcome says only what can be shown:
// the HTTP status or the error's code, never the URL (it may hold a secret).
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

const TIMEOUT_MS = 10_000;

/**
 * @param {string} url @param {{ headers: Record<string, string>, body: string }} message
 * @returns {Promise<{ ok: boolean, status?: number, error?: string }>}
 */
export function post(url, message) {
	return new Promise((resolve) => {
		let parsed;
		try {
			parsed = new URL(url);
		} catch {
			resolve({ ok: false, error: "not a URL" });
			return;
		}
		const body = Buffer.from(message.body, "utf8");
		const send = parsed.protocol === "https:" ? httpsRequest : httpRequest;
		try {
			const req = send(
				parsed,
				{
					method: "POST",
					headers: { ...message.headers, "Content-Length": String(body.length), "User-Agent": "agent-board" },
					timeout: TIMEOUT_MS,
				},
				(res) => {
					res.resume();
					const status = res.statusCode ?? 0;
					res.on("end", () => resolve({ ok: status >= 200 && status < 300, status }));
					res.on("error", () => resolve({ ok: false, status }));
				},
			);
			req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })));
			req.on("error", (error) =>
				resolve({ ok: false, error: /** @type {NodeJS.ErrnoException} */ (error).code ?? "request failed" }),
			);
			req.end(body);
		} catch (error) {
			resolve({ ok: false, error: /** @type {NodeJS.ErrnoException} */ (error).code ?? "request refused" });
		}
	});
}
