/** Opens the board in pi's editor slot (ctx.ui.custom) and resolves with how it ended. */
import { homedir } from "node:os";
import { type ExtensionCommandContext, renderDiff } from "@earendil-works/pi-coding-agent";
import { mergeConflicts } from "../engine/git/merge-preview.ts";
import type { BoardSettings } from "../view-model/prefs.ts";
import type { BoardService } from "../engine/types.ts";
import { readRowDiff } from "../view-model/diff.ts";
import type { DiffCache } from "../view-model/diff-cache.ts";
import type { BoardFeed } from "../view-model/feed.ts";
import type { OverlapIndex } from "../view-model/overlap-index.ts";
import { loadPrefs, savePrefs } from "../view-model/prefs.ts";
import { readRowReceipts } from "../view-model/sent-receipts.ts";
import { readTranscript, withSent } from "../view-model/transcript.ts";
import { readBoardConfig } from "../../../runner/life/board-config.mjs";
import { Board } from "./board.ts";
import type { BoardResult } from "./deps.ts";

export interface BoardShared {
	feed: BoardFeed;
	diffCache: DiffCache;
	overlaps: OverlapIndex;
	settings: BoardSettings;
	applySettings(settings: BoardSettings): void;
	attachedId?: string;
}

function modelChoices(ctx: ExtensionCommandContext): string[] {
	const scoped = ctx.scopedModels.map((entry) => `${entry.model.provider}/${entry.model.id}`);
	if (scoped.length > 0) return scoped;
	return ctx.modelRegistry.getAvailable().map((model) => `${model.provider}/${model.id}`);
}

export async function openBoard(
	ctx: ExtensionCommandContext,
	service: BoardService,
	shared: BoardShared,
): Promise<BoardResult> {
	const prefs = await loadPrefs(service.storeDir);
	const models = modelChoices(ctx);
	return ctx.ui.custom<BoardResult>((tui, theme, keybindings, done) => {
		const board = new Board({
			service,
			feed: shared.feed,
			tui,
			theme,
			keys: keybindings,
			requestRender: () => tui.requestRender(),
			// Stop ticking the moment the board closes, whatever pi does with the component after.
			done: (value) => {
				board.dispose();
				done(value);
			},
			height: () => tui.terminal.rows,
			cwd: ctx.cwd,
			home: homedir(),
			models,
			targetNames: () => Object.keys(readBoardConfig(service.storeDir).targets),
			prefs,
			savePrefs: (next) => savePrefs(service.storeDir, next),
			settings: shared.settings,
			saveSettings: (settings) => {
				prefs.board = settings;
				shared.applySettings(settings);
				void savePrefs(service.storeDir, prefs).catch(() => undefined);
			},
			readTranscript: async (row) => {
				const { earlier, current } = readRowReceipts(service.storeDir, row.id, row.currentRunId);
				return withSent(await readTranscript(row.sessionFile), earlier, current);
			},
			readDiff: readRowDiff,
			renderDiff: (text) => renderDiff(text),
			mergeConflicts,
			diffCache: shared.diffCache,
			overlaps: shared.overlaps,
			attachedId: shared.attachedId,
			canGoBack: shared.attachedId !== undefined,
		});
		void board.start();
		return board;
	});
}
