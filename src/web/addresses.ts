/**
 * Where the web server listens and what that exposes, in words: loopback or not, the URL a browser
 * opens, and the warning a non-loopback bind prints. Pure, except `lanAddresses` (the machine's
 * interfaces, for the URL of a wildcard bind).
 */
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";

export function isLoopback(host: string): boolean {
	const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
	return bare === "localhost" || bare === "::1" || (isIP(bare) === 4 && bare.startsWith("127."));
}

export function isWildcard(host: string): boolean {
	return host === "0.0.0.0" || host === "::" || host === "[::]";
}

/** `host:port` as a URL writes it (an IPv6 address in brackets). */
export function hostPort(host: string, port: number): string {
	const bare = host.replace(/^\[(.*)\]$/, "$1");
	return isIP(bare) === 6 ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/** The machine's non-internal IPv4 addresses (what a phone on the LAN reaches for a wildcard bind). */
export function lanAddresses(): string[] {
	const out: string[] = [];
	for (const list of Object.values(networkInterfaces()))
		for (const entry of list ?? []) if (entry.family === "IPv4" && !entry.internal) out.push(entry.address);
	return out;
}

/** The URL to print: a wildcard bind is reached at a LAN address when there is one. */
export function baseUrl(
	host: string,
	port: number,
	lan: readonly string[] = isWildcard(host) ? lanAddresses() : [],
): string {
	const shown = isWildcard(host) ? (lan[0] ?? "127.0.0.1") : host;
	return `http://${hostPort(shown, port)}`;
}

export function loginUrl(base: string, token: string): string {
	return `${base}/login?token=${encodeURIComponent(token)}`;
}

/** Empty for a loopback bind; otherwise who can reach the board and what they get with the token. */
export function exposureText(host: string, port: number): string {
	if (isLoopback(host)) return "";
	const who = isWildcard(host)
		? `every network this machine is on (${hostPort(host, port)}: the LAN, and beyond it if the port is forwarded)`
		: `every device that can reach ${hostPort(host, port)}`;
	return [
		`Exposed to ${who}.`,
		"Anyone there can reach the login page; with the token they can read every row (prompts, answers, file names), answer and steer agents, merge, and start agents that run commands as you.",
		"The traffic is plain http: anyone on the network path can read the token and the board. Prefer 127.0.0.1 with an ssh tunnel; `serve --rotate` if the URL leaked.",
	].join("\n");
}
