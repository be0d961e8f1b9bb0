/** The board component on a fake service: keys in, screens out at a width, and what it asked of the service. */
import { KeybindingsManager, type TUI, TUI_KEYBINDINGS } from "@earendil-works/pi-tui";
import { afterEach } from "vitest";
import { Board } from "../src/board/dashboard/board.ts";
import type { BoardDeps, BoardResult } from "../src/board/dashboard/deps.ts";
import type { View } from "../src/board/dashboard/view.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { BoardFeed } from "../src/board/view-model/feed.ts";
import type { DispatchPrefs } from "../src/board/view-model/prefs.ts";
import { createFakeBoard, type FakeBoard, plainTheme, settle } from "./fake-board-service.ts";

export interface DashboardHarness {
	dash: Board;
	board: FakeBoard;
	feed: BoardFeed;
	results: BoardResult[];
	saved: DispatchPrefs[];
	renders: { count: number };
	/** The view on top of the board's stack. */
	top(): View;
	press(...keys: string[]): Promise<void>;
	screen(width?: number): string;
	dispose(): void;
}

export interface HarnessOptions extends Partial<BoardDeps> {
	termRows?: number;
	/** Runs before the board opens (the feed may already be following the store, as pi's footer does). */
	prepare?(board: FakeBoard, feed: BoardFeed): Promise<void> | void;
	/** The fake board's store directory (a test that starts the web server gives a real one). */
	storeDir?: string;
}

export async function dashboardHarness(rows: BoardRow[], options: HarnessOptions = {}): Promise<DashboardHarness> {
	const board = createFakeBoard(rows, options.storeDir);
	const feed = new BoardFeed(() => board);
	await options.prepare?.(board, feed);
	const results: BoardResult[] = [];
	const saved: DispatchPrefs[] = [];
	const renders = { count: 0 };
	const { termRows, prepare: _prepare, storeDir: _storeDir, ...deps } = options;
	// The board keeps what pi needs (a transcript row and the footer) out of the terminal's rows.
	const height = termRows ?? 34;
	// The Editor needs only these two members of pi's TUI.
	const tui = { requestRender: () => undefined, terminal: { rows: height } } as unknown as TUI;
	const dash = new Board({
		service: board,
		feed,
		tui,
		theme: plainTheme,
		keys: new KeybindingsManager(TUI_KEYBINDINGS),
		requestRender: () => {
			renders.count += 1;
		},
		done: (result) => results.push(result),
		height: () => height,
		cwd: "/tmp/here",
		models: ["faux/faux-1", "faux/faux-2"],
		prefs: {},
		savePrefs: async (prefs) => {
			saved.push({ ...prefs });
		},
		readTranscript: async () => [
			{ role: "user", text: "hello" },
			{ role: "assistant", text: "Hi, I am the **row's** agent." },
		],
		readDiff: async () => ["diff --git a/x b/x", "@@ -1,2 +1,2 @@", " same", "-removed line", "+added line"],
		tickMs: 60_000,
		// The fake store has no index: `/`'s words find nothing more unless a test gives a search.
		search: async () => [],
		...deps,
	});
	await dash.start();
	dash.render(120);
	return {
		dash,
		board,
		feed,
		results,
		saved,
		renders,
		top: () => dash.top(),
		async press(...keys) {
			for (const key of keys) {
				dash.handleInput(key);
				await settle();
			}
		},
		screen(width = 120) {
			return dash.render(width).join("\n");
		},
		dispose() {
			dash.dispose();
			feed.stop();
		},
	};
}

/** dashboardHarness for a test file: every board it opens is disposed after its test (its timers stop). */
export function harnessPerTest(): (
	rows: BoardRow[],
	options?: Parameters<typeof dashboardHarness>[1],
) => Promise<DashboardHarness> {
	const open: DashboardHarness[] = [];
	afterEach(() => {
		for (const h of open.splice(0)) h.dispose();
	});
	return async (rows, options = {}) => {
		const h = await dashboardHarness(rows, options);
		open.push(h);
		return h;
	};
}
