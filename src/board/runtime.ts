/** Everything the board needs once used, in one module the loader imports on first use (loader.ts). */
export { createBoardService } from "./engine/service.ts";
export { autoGc } from "./engine/gc.ts";
export { formatAttemptSet } from "./subcommands/attempt-text.ts";
export {
	completeArgs,
	listSupervised,
	parseSubcommand,
	runSubcommand,
} from "./subcommands/subcommands.ts";
export { formatTable } from "./subcommands/table.ts";
export { describeRow } from "./tool-text.ts";
export { DELIVERY_TEXT } from "./view-model/delivery-text.ts";
export { inert } from "./engine/sanitize.ts";
export { openBoard } from "./dashboard/open-board.ts";
export { ATTACH_STATUS_KEY, attachedStatus, attachTo, goBack, loadAttach } from "./presence/attach.ts";
export { resolveSettings } from "./presence/notify.ts";
export { BoardPresence } from "./presence/presence.ts";
export { DiffCache } from "./view-model/diff-cache.ts";
export { BoardFeed } from "./view-model/feed.ts";
export { OverlapIndex } from "./view-model/overlap-index.ts";
export { loadPrefs } from "./view-model/prefs.ts";
export type BoardRuntime = typeof import("./runtime.ts");
