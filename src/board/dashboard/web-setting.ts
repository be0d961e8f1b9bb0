/**
 * The web server as one switch in the board's settings (`S`): on starts it on 127.0.0.1 (as
 * `/agent-board serve` does) and shows its one-time login URL and QR code over the settings; off stops
 * it. Reading the switch only reads the server's record; the server's code loads when it is flipped.
 */
import type { SettingEntry } from "./settings-view.ts";
import { ScrollLines, scrollKeys } from "./scroll-lines.ts";
import { wrap } from "./text.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";
import { fit } from "../view-model/ui-types.ts";
import { DEFAULT_HOST, defaultPort } from "../../web/serve-args.ts";
import type { ServeOutput } from "../../web/serve-command.ts";
import { liveRecord } from "../../web/web-files.ts";

/** The login URL and its QR code, until a key closes it. */
export class WebLoginView extends View {
	private readonly scroller: ScrollLines;

	constructor(host: Host, output: ServeOutput) {
		super(host);
		const theme = host.deps.theme;
		const lines = (width: number) => [
			...wrap(output.text, width).map((line) => theme.fg("accent", line)),
			...(output.qr ?? []).map((line) => fit(line, width)),
			...wrap(output.after ?? "", width).map((line) => theme.fg("muted", line)),
		];
		this.scroller = new ScrollLines(host, lines, () => host.bodyRows() - 1);
		this.addChild(new Lines((width) => [fit(theme.bold("The board in a browser"), width)]));
		this.addChild(this.scroller);
	}

	keyTable(): KeyEntry[] {
		return [
			...scrollKeys(this.deps.keys, this.scroller, { line: "scroll" }),
			{
				keys: ["cancel", "confirm", "quit"],
				help: "close",
				hint: "close",
				keep: true,
				run: () => this.host.pop(this),
			},
		];
	}
}

function running(storeDir: string): boolean {
	try {
		return liveRecord(storeDir) !== undefined;
	} catch {
		return false;
	}
}

export const WEB_SETTING: SettingEntry = {
	id: "web",
	label: "the board in a browser (web server)",
	description: `on: serves this store on ${DEFAULT_HOST}:${defaultPort()} and shows a one-time login URL and QR code (/agent-board serve for other addresses); off: stops it`,
	values: ["on", "off"],
	read: (deps) => (running(deps.service.storeDir) ? "on" : "off"),
	write: async (deps, value, host) => {
		const { runServe } = await import("../../web/serve-command.ts");
		const output = await runServe(
			value === "on" ? { action: "start", host: DEFAULT_HOST, port: defaultPort() } : { action: "stop" },
			deps.service.storeDir,
			deps.cwd,
		);
		if (output.qr && host) host.push(new WebLoginView(host, output));
		else host?.setStatus(output.text.split("\n")[0] ?? "");
	},
};
