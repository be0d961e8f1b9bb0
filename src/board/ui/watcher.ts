/**
 * Background watcher outside the dashboard: keeps a footer status ("2 need input") and notifies
 * when a row turns needs_input, failed or completed. Started on session_start, stopped on
 * session_shutdown; it polls the cheap version() and re-lists only when it changed.
 */
import type { BoardRow, BoardService, RowState } from "../types.ts";

export const STATUS_KEY = "agent-board";
const NOTIFY_STATES: readonly RowState[] = ["needs_input", "failed", "completed"];

export interface WatcherUi {
	setStatus(key: string, text: string | undefined): void;
	notify(message: string, type?: "info" | "warning" | "error"): void;
}

export interface Transition {
	row: BoardRow;
	from: RowState | undefined;
}

/** Rows that entered a notify state since `previous`; rows first seen in a notify state are not news. */
export function transitions(previous: ReadonlyMap<string, RowState>, rows: readonly BoardRow[]): Transition[] {
	const out: Transition[] = [];
	for (const row of rows) {
		if (row.archived) continue;
		const from = previous.get(row.id);
		if (from === row.state || !NOTIFY_STATES.includes(row.state)) continue;
		if (from === undefined) continue;
		out.push({ row, from });
	}
	return out;
}

export function statusText(rows: readonly BoardRow[]): string | undefined {
	const waiting = rows.filter((row) => !row.archived && row.state === "needs_input").length;
	const running = rows.filter((row) => !row.archived && row.alive && row.state !== "needs_input").length;
	const parts: string[] = [];
	if (waiting > 0) parts.push(`${waiting} need input`);
	if (running > 0) parts.push(`${running} running`);
	return parts.length > 0 ? `board: ${parts.join(", ")}` : undefined;
}

export function notificationText(t: Transition): { text: string; type: "info" | "warning" | "error" } {
	const name = t.row.name;
	if (t.row.state === "needs_input") return { text: `agent-board: ${name} needs input: ${t.row.question ?? t.row.summary}`, type: "warning" };
	if (t.row.state === "failed") return { text: `agent-board: ${name} failed: ${t.row.error ?? t.row.summary}`, type: "error" };
	return { text: `agent-board: ${name} completed: ${t.row.summary}`, type: "info" };
}

export class BoardWatcher {
	private timer: ReturnType<typeof setInterval> | undefined;
	private version = "";
	private states = new Map<string, RowState>();
	private seeded = false;
	private busy = false;
	/** While the dashboard is open it shows changes itself; notifications would only repeat them. */
	quiet = false;

	private readonly getService: () => BoardService;
	private readonly intervalMs: number;

	constructor(getService: () => BoardService, intervalMs = 1000) {
		this.getService = getService;
		this.intervalMs = intervalMs;
	}

	start(ui: WatcherUi): void {
		this.stop();
		this.timer = setInterval(() => void this.tick(ui), this.intervalMs);
		void this.tick(ui);
	}

	stop(): void {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}

	async tick(ui: WatcherUi): Promise<void> {
		if (this.busy) return;
		this.busy = true;
		try {
			const service = this.getService();
			const version = await service.version();
			if (version === this.version) return;
			this.version = version;
			const rows = await service.list();
			if (!this.timer) return;
			if (this.seeded && !this.quiet) {
				for (const t of transitions(this.states, rows)) {
					const note = notificationText(t);
					ui.notify(note.text, note.type);
				}
			}
			this.states = new Map(rows.map((row) => [row.id, row.state]));
			this.seeded = true;
			ui.setStatus(STATUS_KEY, statusText(rows));
		} catch {
			// A store being written mid-poll is retried on the next tick; the footer keeps its last text.
			this.version = "";
		} finally {
			this.busy = false;
		}
	}
}
