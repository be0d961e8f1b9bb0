/**
 * `/agent-board report [--since 12h]`: the morning report as text, each row with its link on the page
 * when the web view runs. Loaded only when used (it reads the web server's record).
 */
import { parseSince } from "../../../runner/time-words.mjs";
import { readReport } from "../view-model/report-read.ts";
import { reportText } from "../view-model/report.ts";
import type { BoardService } from "../engine/types.ts";
import { baseUrl } from "../../web/addresses.ts";
import { rowUrl } from "../../web/row-url.ts";
import { liveRecord } from "../../web/web-files.ts";

export async function runReport(service: BoardService, since: string, now = Date.now()): Promise<string> {
	const from = parseSince(since, now);
	if (from === undefined) throw new Error(`--since: not a time: ${since}`);
	const server = liveRecord(service.storeDir);
	const base = server ? baseUrl(server.host, server.port) : undefined;
	const report = await readReport(service, from, now, base ? (id) => rowUrl(base, id) : undefined);
	return reportText(report);
}
