/** Wrapping and Markdown for worker text, sanitised first (it is untrusted). */
import { Markdown, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { cleanBlock } from "../view-model/row-text.ts";
import type { UiTheme } from "../view-model/ui-types.ts";
import { markdownTheme } from "./theme.ts";

export function wrap(text: string, width: number): string[] {
	const out: string[] = [];
	for (const line of text.split("\n")) out.push(...(line ? wrapTextWithAnsi(line, Math.max(1, width)) : [""]));
	return out;
}

/** Markdown of worker text, cached per text and width (a tick repaints once a second). */
const markdownCache = new Map<string, string[]>();
export function markdownLines(text: string, width: number, theme: UiTheme): string[] {
	const key = `${width}\u0000${text}`;
	const hit = markdownCache.get(key);
	if (hit) return hit;
	const lines = [...new Markdown(cleanBlock(text), 0, 0, markdownTheme(theme)).render(Math.max(1, width))];
	if (markdownCache.size > 64) markdownCache.clear();
	markdownCache.set(key, lines);
	return lines;
}
