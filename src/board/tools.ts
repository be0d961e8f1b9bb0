/** LLM tools so the main agent can fan work out to the board and check on it. */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { BoardRow, BoardService } from "./types.ts";

function describe(row: BoardRow): string {
	const parts = [`${row.id} [${row.state}] ${row.name}`, `  summary: ${row.summary}`];
	if (row.question) parts.push(`  question: ${row.question}`);
	if (row.error && row.state !== "needs_input") parts.push(`  error: ${row.error}`);
	if (row.worktreePath) parts.push(`  worktree: ${row.worktreePath} (${row.branch ?? ""})`);
	return parts.join("\n");
}

export function registerBoardTools(pi: ExtensionAPI, getService: () => BoardService): void {
	pi.registerTool({
		name: "board_dispatch",
		label: "Board dispatch",
		description:
			"Start a background pi agent on the agent board with a self-contained prompt. It runs detached in its own session; check it later with board_status.",
		promptSnippet: "Start a background agent on the agent board",
		parameters: Type.Object({
			prompt: Type.String({ description: "Complete, self-contained task for the background agent" }),
			name: Type.Optional(Type.String({ description: "Short row name" })),
			cwd: Type.Optional(Type.String({ description: "Working directory (default: the current one)" })),
			model: Type.Optional(Type.String({ description: "Model, e.g. provider/id" })),
			worktreeMode: Type.Optional(Type.Union([Type.Literal("none"), Type.Literal("auto"), Type.Literal("worktree")])),
		}),
		async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
			const row = await getService().dispatch({
				prompt: params.prompt,
				name: params.name,
				cwd: params.cwd ?? ctx.cwd,
				model: params.model,
				worktreeMode: params.worktreeMode,
			});
			return { content: [{ type: "text", text: `Dispatched ${row.id} (${row.state}).\n${describe(row)}` }], details: { id: row.id } };
		},
	});

	pi.registerTool({
		name: "board_status",
		label: "Board status",
		description: "Show agent board rows: one row by id, or all active (non-archived) rows with state, summary and any question.",
		promptSnippet: "Check background agents on the agent board",
		parameters: Type.Object({
			id: Type.Optional(Type.String({ description: "Row id; omit for all rows" })),
		}),
		async execute(_toolCallId, params) {
			const service = getService();
			if (params.id) {
				const row = await service.get(params.id);
				if (!row) throw new Error(`no such row: ${params.id}`);
				return { content: [{ type: "text", text: describe(row) }], details: { ids: [row.id] } };
			}
			const rows = await service.list();
			const text = rows.length ? rows.map(describe).join("\n") : "The board has no rows.";
			return { content: [{ type: "text", text }], details: { ids: rows.map((r) => r.id) } };
		},
	});
}
