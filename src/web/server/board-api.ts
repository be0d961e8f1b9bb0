/**
 * The page's board-wide reads: the targets table (read-only, as `/agent-board targets` prints it) and
 * the morning report (as `/agent-board report` builds it).
 */
import type { IncomingMessage } from "node:http";
import type { BoardService } from "../../board/engine/types.ts";
import { parseSince } from "../../../runner/time-words.mjs";
import { readReport } from "../../board/view-model/report-read.ts";
import { answerBy, reportHeadline } from "../../board/view-model/report.ts";
import { clean } from "../../board/view-model/row-text.ts";
import { HttpError } from "./http-util.ts";
import { targetLoad, targetState } from "../../board/view-model/target-text.ts";

interface Deps {
	service: BoardService;
}

type BoardHandler = (deps: Deps, query: URLSearchParams, req?: IncomingMessage) => Promise<unknown>;

export const BOARD_GET: Record<string, BoardHandler> = {
	/** The morning report (`/agent-board report`), each row's link the page's own (`/?row=<id>`). */
	"/api/report": async ({ service }, query) => {
		const text = query.get("since") || "12h";
		const since = parseSince(text);
		if (since === undefined) throw new HttpError(400, `since: not a time: ${clean(text)} (12h, 2d, today, a date)`);
		const report = await readReport(service, since, Date.now(), (id) => `/?row=${encodeURIComponent(id)}`);
		return {
			...report,
			headline: reportHeadline(report),
			answers: report.answers.map((answer) => ({ ...answer, byText: answerBy(answer) })),
		};
	},
	/** Where rows run, with the columns of `/agent-board targets`; changing them stays a command. */
	"/api/targets": async ({ service }) => {
		const views = await service.targets.list();
		return {
			targets: views.map((view) => ({
				name: clean(view.name),
				kind: clean(view.kind),
				where: clean(view.where),
				running: view.running,
				max: view.max,
				queued: view.queued,
				load: targetLoad(view),
				state: clean(targetState(view)),
				...(view.members ? { members: view.members.map(clean) } : {}),
			})),
		};
	},
};
