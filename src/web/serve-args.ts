/**
 * `/agent-board serve` arguments, parsed without I/O: start the web server (`--port N`, `--host H`), or
 * `--stop`, `--status`, `--rotate` one that runs. Light: the subcommand parser imports it at pi's start.
 */

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 7878;

/** The port `serve` and the settings switch use unless told: AGENT_BOARD_WEB_PORT, else 7878. */
export function defaultPort(env: NodeJS.ProcessEnv = process.env): number {
	const value = env.AGENT_BOARD_WEB_PORT;
	return value && /^\d{1,5}$/.test(value) && Number(value) <= 65535 ? Number(value) : DEFAULT_PORT;
}

export type ServeAction =
	| { action: "start"; port: number; host: string }
	| { action: "stop" }
	| { action: "status" }
	| { action: "rotate" };

export type ServeParsed = { ok: true; serve: ServeAction } | { ok: false; error: string };

/** A host name or an IP address: no scheme, path, port, spaces or brackets. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|[0-9A-Fa-f:.]{2,45})$/;

export function parseServeArgs(rest: string, env: NodeJS.ProcessEnv = process.env): ServeParsed {
	const words = rest.trim().split(/\s+/).filter(Boolean);
	const single = ["--stop", "--status", "--rotate"] as const;
	const only = single.find((flag) => words.includes(flag));
	if (only) {
		if (words.length > 1) return { ok: false, error: `${only} takes no other argument` };
		return { ok: true, serve: { action: only.slice(2) as "stop" | "status" | "rotate" } };
	}
	let port = defaultPort(env);
	let host = DEFAULT_HOST;
	for (let i = 0; i < words.length; i++) {
		const word = words[i] ?? "";
		const [flag, inline] = word.includes("=")
			? [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)]
			: [word, undefined];
		const value = inline ?? words[++i];
		if (flag === "--port") {
			if (value === undefined || !/^\d{1,5}$/.test(value) || Number(value) > 65535)
				return {
					ok: false,
					error: `--port needs a port number 0-65535 (0: any free port), not ${value === undefined ? "nothing" : JSON.stringify(value)}`,
				};
			port = Number(value);
		} else if (flag === "--host") {
			const bare = value?.replace(/^\[(.*)\]$/, "$1");
			if (!bare || !HOST.test(bare))
				return {
					ok: false,
					error: `--host needs an address or host name to listen on (e.g. 127.0.0.1, 0.0.0.0), not ${value === undefined ? "nothing" : JSON.stringify(value)}`,
				};
			host = bare;
		} else return { ok: false, error: `unknown serve argument ${JSON.stringify(word)}` };
	}
	return { ok: true, serve: { action: "start", port, host } };
}
