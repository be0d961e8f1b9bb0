/** Responses with the server's security headers, and request bodies read with a size limit. */
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * No inline script or style, nothing from elsewhere, and Trusted Types: even a stray innerHTML in the
 * page would throw instead of parsing markup. The one policy (`agent-board`) only lets the service
 * worker's own URL through.
 */
export const CSP = [
	"default-src 'none'",
	"script-src 'self'",
	"style-src 'self'",
	"img-src 'self' data:",
	"connect-src 'self'",
	"manifest-src 'self'",
	"worker-src 'self'",
	"base-uri 'none'",
	"form-action 'none'",
	"frame-ancestors 'none'",
	"require-trusted-types-for 'script'",
	"trusted-types agent-board",
].join("; ");

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
	"content-security-policy": CSP,
	"x-content-type-options": "nosniff",
	"referrer-policy": "no-referrer",
	"x-frame-options": "DENY",
	"cross-origin-opener-policy": "same-origin",
	"cross-origin-resource-policy": "same-origin",
	"permissions-policy": "camera=(), microphone=(), geolocation=()",
};

export function send(
	res: ServerResponse,
	status: number,
	body: string | Buffer,
	type: string,
	headers: Record<string, string | string[]> = {},
): void {
	res.writeHead(status, {
		...SECURITY_HEADERS,
		"content-type": type,
		"cache-control": "no-store",
		"content-length": String(Buffer.byteLength(body)),
		...headers,
	});
	res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
	send(res, status, JSON.stringify(value), "application/json; charset=utf-8");
}

export class HttpError extends Error {
	readonly status: number;

	constructor(status: number, message: string) {
		super(message);
		this.status = status;
	}
}

/** A JSON object body of at most `limit` bytes, as application/json. */
export async function readJson(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
	if (!/^application\/json\b/i.test(req.headers["content-type"] ?? ""))
		throw new HttpError(415, "send application/json");
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req) {
		const buffer = chunk as Buffer;
		size += buffer.length;
		if (size > limit) throw new HttpError(413, `body over ${limit} bytes`);
		chunks.push(buffer);
	}
	if (size === 0) return {};
	let value: unknown;
	try {
		value = JSON.parse(Buffer.concat(chunks).toString("utf8"));
	} catch {
		throw new HttpError(400, "body is not JSON");
	}
	if (!value || typeof value !== "object" || Array.isArray(value))
		throw new HttpError(400, "body must be a JSON object");
	return value as Record<string, unknown>;
}

/** Field readers for request bodies: a wrong type is a 400 naming the field. */
export function optString(body: Record<string, unknown>, key: string, max = 4096): string | undefined {
	const value = body[key];
	if (value === undefined || value === null) return undefined;
	if (typeof value !== "string") throw new HttpError(400, `${key} must be a string`);
	if (value.length > max) throw new HttpError(400, `${key} is longer than ${max} characters`);
	return value;
}

export function optBoolean(body: Record<string, unknown>, key: string): boolean {
	const value = body[key];
	if (value === undefined || value === null) return false;
	if (typeof value !== "boolean") throw new HttpError(400, `${key} must be true or false`);
	return value;
}
