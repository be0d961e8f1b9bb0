/**
 * The board component on any service, with what pi gives it (a TUI of `rows` lines, keys, a theme),
 * for first paints in tests and benches: no vitest here (benches load this with Node's strip-only TypeScript).
 */
import { KeybindingsManager, TUI_KEYBINDINGS, type TUI } from "@earendil-works/pi-tui";
import { Board } from "../src/board/dashboard/board.ts";
import type { BoardService } from "../src/board/engine/types.ts";
import { BoardFeed } from "../src/board/view-model/feed.ts";

export interface BoardOnOptions {
	rows: number;
	cwd: string;
	feed?: BoardFeed;
	theme?: { fg(color: string, text: string): string; bold(text: string): string };
	tickMs?: number;
}

export function boardOn(service: BoardService, options: BoardOnOptions): { dash: Board; feed: BoardFeed } {
	const feed = options.feed ?? new BoardFeed(() => service);
	const dash = new Board({
		service,
		feed,
		tui: { requestRender: () => undefined, terminal: { rows: options.rows } } as unknown as TUI,
		tickMs: options.tickMs ?? 60_000,
		theme: options.theme ?? { fg: (_color: string, text: string) => text, bold: (text: string) => text },
		keys: new KeybindingsManager(TUI_KEYBINDINGS),
		requestRender: () => undefined,
		done: () => undefined,
		height: () => options.rows,
		cwd: options.cwd,
		models: [],
		prefs: {},
		savePrefs: async () => undefined,
		readTranscript: async () => [],
		readDiff: async () => [],
	});
	return { dash, feed };
}
