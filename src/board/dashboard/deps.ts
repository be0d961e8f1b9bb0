/** What the board is given by pi and the extension: the service, the shared feed, pi's TUI, theme and keys. */
import type { TUI } from "@earendil-works/pi-tui";
import type { BoardRow, BoardService } from "../engine/types.ts";
import type { DiffCache } from "../view-model/diff-cache.ts";
import type { BoardFeed } from "../view-model/feed.ts";
import type { OverlapIndex } from "../view-model/overlap-index.ts";
import type { BoardSettings, DispatchPrefs } from "../view-model/prefs.ts";
import type { TranscriptEntry } from "../view-model/transcript.ts";
import type { KeyMatcher, UiTheme } from "../view-model/ui-types.ts";
import type { SearchHit } from "../../../runner/search/search-query.mjs";

/** How the board ends: closed, or asked pi to switch to a row's session, or back to where we attached from. */
export type BoardResult = { kind: "close" } | { kind: "attach"; row: BoardRow } | { kind: "back" };

export interface BoardDeps {
	service: BoardService;
	feed: BoardFeed;
	/** Host of the Editor components (pi's TUI). */
	tui: TUI;
	theme: UiTheme;
	keys: KeyMatcher;
	requestRender(): void;
	done(result: BoardResult): void;
	/** Terminal rows: the board sizes itself to what is left of them. */
	height(): number;
	cwd: string;
	home?: string;
	models: readonly string[];
	/** The search behind `/`'s words (board-search.ts); a test gives its own, the board the store's index. */
	search?(storeDir: string, text: string): Promise<readonly SearchHit[]>;
	/** Names of the board's targets (its config.json), read when the new-agent form opens; "local" is implied. */
	targetNames?(): readonly string[];
	prefs: DispatchPrefs;
	savePrefs(prefs: DispatchPrefs): Promise<void>;
	settings?: BoardSettings;
	saveSettings?(settings: BoardSettings): void;
	readTranscript(row: BoardRow): Promise<TranscriptEntry[]>;
	readDiff(row: BoardRow): Promise<string[]>;
	/** pi's diff renderer (numbered diff text to coloured lines); plain colouring when absent. */
	renderDiff?(text: string): string;
	/** Files a merge of the row would conflict in (computed off to the side); none when it merges clean. */
	mergeConflicts?(row: BoardRow): Promise<string[]>;
	diffCache?: DiffCache;
	overlaps?: OverlapIndex;
	/** Row this pi session is attached to, and whether `b` can go back to where we came from. */
	attachedId?: string;
	canGoBack?: boolean;
	now?: () => number;
	tickMs?: number;
}
