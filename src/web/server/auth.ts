/**
 * Who may talk to the web server, decided per request without I/O. The token (32 random bytes) lives in
 * an HttpOnly, SameSite=Strict cookie set by the login URL; every request must carry it (401), come for a
 * Host that cannot be a rebound DNS name (403), and, when it changes anything, come from our own Origin
 * with the CSRF token the page got from /api/session (403).
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";

export const COOKIE = "agent_board_web";
export const CSRF_HEADER = "x-csrf-token";

export function newToken(): string {
	return randomBytes(32).toString("base64url");
}

/** The page's CSRF token: derived from the login token, so a rotation changes both. */
export function csrfFor(token: string): string {
	return createHmac("sha256", token).update("agent-board csrf").digest("base64url");
}

export function sameSecret(given: string | undefined, expected: string): boolean {
	if (typeof given !== "string") return false;
	const a = Buffer.from(given);
	const b = Buffer.from(expected);
	return a.length === b.length && timingSafeEqual(a, b);
}

export function cookieValue(header: string | undefined, name: string = COOKIE): string | undefined {
	for (const part of (header ?? "").split(";")) {
		const at = part.indexOf("=");
		if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
	}
	return undefined;
}

export function loginCookie(token: string): string {
	return `${COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=31536000`;
}

/** The host name of a Host header ("[::1]:80" -> "::1"), lower case; undefined when malformed. */
export function hostName(header: string | undefined): string | undefined {
	if (!header) return undefined;
	const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s/]+)(?::(\d{1,5}))?$/.exec(header.trim());
	return match?.[1] ? match[1].replace(/^\[(.*)\]$/, "$1").toLowerCase() : undefined;
}

/**
 * DNS rebinding: a page of another site reaches us under a name it controls. An IP address or
 * `localhost` cannot be rebound, nor the name the server was told to listen on; any other name is refused.
 */
export function hostAllowed(header: string | undefined, bindHost: string): boolean {
	const name = hostName(header);
	if (!name) return false;
	return name === "localhost" || isIP(name) !== 0 || name === bindHost.replace(/^\[(.*)\]$/, "$1").toLowerCase();
}

/** An Origin is ours when it is this very scheme and Host. */
export function originMatches(origin: string, hostHeader: string | undefined): boolean {
	try {
		const url = new URL(origin);
		return url.protocol === "http:" && url.host === new URL(`http://${hostHeader ?? ""}`).host;
	} catch {
		return false;
	}
}

export interface RequestFacts {
	method: string;
	host?: string;
	origin?: string;
	cookie?: string;
	csrf?: string;
}

export type Verdict = { ok: true } | { ok: false; status: 401 | 403; reason: string };

const SAFE_METHODS = new Set(["GET", "HEAD"]);

export function checkRequest(facts: RequestFacts, token: string, bindHost: string): Verdict {
	if (!hostAllowed(facts.host, bindHost)) return { ok: false, status: 403, reason: "wrong Host" };
	if (facts.origin !== undefined && !originMatches(facts.origin, facts.host))
		return { ok: false, status: 403, reason: "wrong Origin" };
	if (!sameSecret(cookieValue(facts.cookie), token)) return { ok: false, status: 401, reason: "not logged in" };
	if (SAFE_METHODS.has(facts.method)) return { ok: true };
	if (facts.origin === undefined) return { ok: false, status: 403, reason: "no Origin" };
	if (!sameSecret(facts.csrf, csrfFor(token))) return { ok: false, status: 403, reason: "wrong CSRF token" };
	return { ok: true };
}
