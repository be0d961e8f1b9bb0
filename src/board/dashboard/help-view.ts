/**
 * Help for the view it was opened from: that view's key table, each key with what it does, wrapped
 * to the width (60 to 200 columns read cleanly) and scrollable to its last key.
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import { fit } from "../view-model/ui-types.ts";
import { keysLabel } from "./keys.ts";
import { ScrollLines, scrollKeys } from "./scroll-lines.ts";
import { wrap } from "./text.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";

/** Key column: as wide as the widest key label, but never more than a third of the line. */
export function helpLines(host: Host, entries: readonly KeyEntry[], width: number): string[] {
	const theme = host.deps.theme;
	const rows = entries
		.filter((entry) => entry.help)
		.map((entry) => ({ keys: keysLabel(host.deps.keys, entry.keys), help: entry.help ?? "" }));
	const keyWidth = Math.min(Math.max(4, ...rows.map((row) => visibleWidth(row.keys))), Math.floor(width / 3));
	const textWidth = Math.max(10, width - keyWidth - 4);
	const out: string[] = [];
	for (const row of rows) {
		const keys = theme.fg("accent", row.keys);
		const text = wrap(row.help, textWidth);
		// A key label wider than its column gets a line of its own; the text never touches it.
		if (visibleWidth(row.keys) > keyWidth)
			out.push(fit(`  ${keys}`, width), ...text.map((line) => fit(`${" ".repeat(keyWidth + 4)}${line}`, width)));
		else
			text.forEach((line, i) => {
				out.push(
					fit(
						`  ${i === 0 ? keys + " ".repeat(keyWidth - visibleWidth(row.keys)) : " ".repeat(keyWidth)}  ${line}`,
						width,
					),
				);
			});
	}
	return out;
}

export class HelpView extends View {
	private readonly scroller: ScrollLines;

	constructor(host: Host, from: View) {
		super(host);
		const theme = host.deps.theme;
		this.scroller = new ScrollLines(
			host,
			(width) => helpLines(host, from.keyTable(), width),
			() => host.bodyRows() - 1,
		);
		this.addChild(
			new Lines((width) => [fit(`${theme.bold("Keys")}${theme.fg("dim", this.scroller.position(width))}`, width)]),
		);
		this.addChild(this.scroller);
	}

	keyTable(): KeyEntry[] {
		return [
			...scrollKeys(this.deps.keys, this.scroller, {
				line: "scroll",
				page: "scroll a page",
				ends: "first / last key",
			}),
			{
				keys: ["cancel", "quit", "help"],
				help: "close help",
				hint: "close",
				keep: true,
				run: () => this.host.pop(this),
			},
		];
	}
}
