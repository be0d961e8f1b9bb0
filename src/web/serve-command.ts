/**
 * `/agent-board serve` as pi runs it: the action, then its words. A login URL (a start, a rotation) is
 * printed once with its QR code: on stdout in print mode, in a panel that stays until a key in the TUI.
 * Loaded only when `serve` is used (ui.ts imports it on demand), with the QR encoder.
 */
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { truncateToWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { renderUnicodeCompact } from "uqr";
import { exposureText, hostPort } from "./addresses.ts";
import type { ServeAction } from "./serve-args.ts";
import { rotateToken, type Serving, serverStatus, startServer, stopServer } from "./serve-control.ts";
import { clockTime } from "../board/view-model/row-text.ts";

export interface ServeOutput {
	text: string;
	/** The QR code of the login URL, one string per terminal line. */
	qr?: string[];
	/** Words after the QR code. */
	after?: string;
}

export function qrLines(url: string): string[] {
	return renderUnicodeCompact(url, { ecc: "L", border: 2 }).split("\n");
}

function loginText(serving: Serving, head: string): ServeOutput {
	const { record, login, exposure } = serving;
	const port = record.port;
	const lines = [head];
	if (exposure) lines.push(exposure);
	lines.push(
		"Log in once with this URL (shown only now; `/agent-board serve --rotate` makes a new one and logs every browser out):",
		login ?? serving.url,
		"",
	);
	const phone = exposure
		? "On a phone on that network: scan the code."
		: `On a phone: ssh -L ${port}:127.0.0.1:${port} <this machine>, then open the URL there (the README says how, and what --host exposes).`;
	const after = [phone, "Stop it with /agent-board serve --stop."];
	return { text: lines.join("\n"), ...(login ? { qr: qrLines(login) } : {}), after: after.join("\n") };
}

export async function runServe(serve: ServeAction, storeDir: string, cwd: string): Promise<ServeOutput> {
	if (serve.action === "status") {
		const record = serverStatus(storeDir);
		if (!record) return { text: "agent-board web: not running (start it with /agent-board serve)" };
		const exposure = exposureText(record.host, record.port);
		return {
			text: [
				`agent-board web: serving ${storeDir} on ${hostPort(record.host, record.port)} (pid ${record.pid}, since ${clockTime(record.startedAt)})`,
				exposure,
			]
				.filter(Boolean)
				.join("\n"),
		};
	}
	if (serve.action === "stop") {
		const stopped = await stopServer(storeDir);
		return {
			text: stopped
				? `agent-board web: stopped (pid ${stopped.pid}); every browser is logged out`
				: "agent-board web: not running",
		};
	}
	if (serve.action === "rotate") {
		const serving = await rotateToken(storeDir);
		return loginText(serving, `agent-board web: new token for ${serving.url}; every browser is logged out`);
	}
	const serving = await startServer({ storeDir, host: serve.host, port: serve.port, cwd });
	if (serving.already) {
		const { record } = serving;
		const other =
			record.host !== serve.host || (serve.port !== 0 && record.port !== serve.port)
				? ` (not on ${hostPort(serve.host, serve.port)}: stop it first with --stop)`
				: "";
		return {
			text: `agent-board web: already serving on ${hostPort(record.host, record.port)}${other} (pid ${record.pid}, since ${clockTime(record.startedAt)}). Log in with the URL it printed, or /agent-board serve --rotate for a new one (logs every browser out).`,
		};
	}
	return loginText(serving, `agent-board web: serving ${storeDir} at ${serving.url} (pid ${serving.record.pid})`);
}

/** Shows the output: the TUI gets a panel (the QR needs the whole width, undimmed); other modes get text. */
export async function serveCommand(
	ctx: ExtensionCommandContext,
	storeDir: string,
	serve: ServeAction,
	say: (text: string) => void,
): Promise<void> {
	const output = await runServe(serve, storeDir, ctx.cwd);
	if (!output.qr || ctx.mode !== "tui")
		return say([output.text, ...(output.qr ?? []), ...(output.after ? ["", output.after] : [])].join("\n"));
	await ctx.ui.custom<void>((_tui, theme, keybindings, done) => ({
		render: (width: number) => [
			...output.text.split("\n").flatMap((line) => wrapTextWithAnsi(theme.fg("accent", line), width)),
			...(output.qr ?? []).map((line) => truncateToWidth(line, width)),
			...(output.after ?? "").split("\n").flatMap((line) => wrapTextWithAnsi(theme.fg("muted", line), width)),
			truncateToWidth(theme.fg("dim", "enter or esc: close"), width),
		],
		handleInput: (data: string) => {
			if (keybindings.matches(data, "tui.select.confirm") || keybindings.matches(data, "tui.select.cancel")) done();
		},
		invalidate: () => undefined,
	}));
}
