/**
 * The report's reading (its building is report.ts, pure): every row, archived ones too; the supervisor's
 * log since the time; the spend ledger's days from then to now.
 */
import { dayOf, SpendLedger } from "../../../runner/life/spend-ledger.mjs";
import { readSupervisorLog } from "../../../runner/supervisor/supervisor-log.mjs";
import type { BoardService } from "../engine/types.ts";
import { buildReport, type Report, type ReportSpendLine } from "./report.ts";

/** At most this many days of the ledger are read (a `--since 1y` reads the last two months). */
const MAX_DAYS = 62;

export async function readReport(
	service: BoardService,
	since: number,
	now = Date.now(),
	rowUrl?: (id: string) => string,
): Promise<Report> {
	const rows = await service.list({ includeArchived: true, slim: true });
	const ledger = new SpendLedger(service.storeDir);
	const days = new Set<string>([dayOf(now)]);
	for (let at = Math.max(since, now - MAX_DAYS * 86_400_000); at < now; at += 86_400_000) days.add(dayOf(at));
	const spend: ReportSpendLine[] = [...days].flatMap((day) => ledger.lines(day));
	return buildReport({
		since,
		now,
		rows,
		decisions: readSupervisorLog(service.storeDir, since),
		spend,
		...(rowUrl ? { rowUrl } : {}),
	});
}
