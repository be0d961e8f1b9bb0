/** LLM tools so the main agent can fan work out to the board and check on it. */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { MAX_ATTEMPTS, MAX_BURST, WORKTREE_MODES } from "../../runner/life/vocabulary.mjs";
import { parseAmount } from "../../runner/life/budget.mjs";
import type { BoardLoader } from "./loader.ts";
import type { BudgetLimit } from "./engine/types.ts";

/** Diff lines returned to the model at most (the full diff is in the dashboard). */
const MAX_DIFF_LINES = 400;

/** A budget given to a tool ("50k", "$2"), or a refusal the model can read. */
function amountParam(name: string, text: string | undefined): BudgetLimit | undefined {
	if (text === undefined) return undefined;
	const amount = parseAmount(text);
	if (!amount) throw new Error(`${name}: expected an amount such as 50k or $2, got ${JSON.stringify(text)}`);
	return amount;
}

/** Registers the tools' schemas only: the engine is loaded when a tool first runs. */
export function registerBoardTools(pi: ExtensionAPI, load: BoardLoader): void {
	pi.registerTool({
		name: "board_dispatch",
		label: "Board dispatch",
		description:
			"Start a background pi agent on the agent board with a self-contained prompt. It runs detached in its own session; check it later with board_status. " +
			`With count N (2-${MAX_ATTEMPTS}, or up to a larger target's or pool's limit) it starts N attempts of the same prompt, each in its own git worktree, as one attempt set: use board_compare when they finish and recommend one to the user. ` +
			"With target it runs on another machine or in a container the user added (/agent-board targets lists them); its code comes back by git, so diff, compare and merge work as for local rows.",
		promptSnippet: "Start a background agent on the agent board",
		parameters: Type.Object({
			prompt: Type.String({ description: "Complete, self-contained task for the background agent" }),
			name: Type.Optional(Type.String({ description: "Short row name" })),
			cwd: Type.Optional(Type.String({ description: "Working directory (default: the current one)" })),
			model: Type.Optional(Type.String({ description: "Model, e.g. provider/id" })),
			worktreeMode: Type.Optional(Type.Union(WORKTREE_MODES.map((mode) => Type.Literal(mode)))),
			count: Type.Optional(
				Type.Integer({
					minimum: 1,
					maximum: MAX_BURST,
					description: "Parallel attempts of the prompt, each in its own worktree (needs a git repository)",
				}),
			),
			target: Type.Optional(
				Type.String({
					description: "Where to run: a target's name (default local, this machine); needs a git repository",
				}),
			),
			preset: Type.Optional(
				Type.String({
					description:
						"A preset the user defined (~/.pi/agent/agents/<name>.md): its model, target, mode, budget and instructions fill what is not given",
				}),
			),
			budget: Type.Optional(
				Type.String({
					description: "How much each agent may spend before it pauses and asks: tokens (50k) or cost ($2)",
				}),
			),
			setBudget: Type.Optional(
				Type.String({
					description: "With count: how much the attempt set may spend in all, tokens (200k) or cost ($5)",
				}),
			),
		}),
		async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
			const budget = amountParam("budget", params.budget);
			const setBudget = amountParam("setBudget", params.setBudget);
			const rows = await (await load.service()).dispatchAttempts({
				prompt: params.prompt,
				name: params.name,
				cwd: params.cwd ?? ctx.cwd,
				model: params.model,
				worktreeMode: params.worktreeMode,
				count: params.count,
				target: params.target,
				preset: params.preset,
				budget,
				setBudget,
			});
			const { describeRow } = await load.runtime();
			const text = rows.map((row) => `Dispatched ${row.id} (${row.state}).\n${describeRow(row)}`).join("\n");
			return { content: [{ type: "text", text }], details: { id: rows[0]?.id, ids: rows.map((row) => row.id) } };
		},
	});

	pi.registerTool({
		name: "board_compare",
		label: "Board compare",
		description:
			"Compare the attempts of an attempt set: each row's state, diff stats, changed files and files that other unmerged rows also changed; with `other`, the diff between two attempts. " +
			"Use it to recommend the best attempt to the user. Never merge yourself: the user merges with /agent-board merge <id>.",
		promptSnippet: "Compare parallel attempts on the agent board",
		parameters: Type.Object({
			id: Type.String({ description: "Any row of the attempt set" }),
			other: Type.Optional(Type.String({ description: "A second row: return the diff between the two attempts" })),
		}),
		async execute(_toolCallId, params) {
			const service = await load.service();
			if (params.other) {
				const lines = await service.compareDiff(params.id, params.other);
				const cut =
					lines.length > MAX_DIFF_LINES
						? [...lines.slice(0, MAX_DIFF_LINES), `… ${lines.length - MAX_DIFF_LINES} more lines`]
						: lines;
				return { content: [{ type: "text", text: cut.join("\n") }], details: { ids: [params.id, params.other] } };
			}
			const set = await service.compare(params.id);
			return {
				content: [{ type: "text", text: (await load.runtime()).formatAttemptSet(set) }],
				details: { ids: set.rows.map((entry) => entry.row.id) },
			};
		},
	});

	pi.registerTool({
		name: "board_reply",
		label: "Board reply",
		description:
			"Send a message to an agent on the board, whatever its state: a working agent gets it steered into its current run (or after its current turn with followUp), " +
			"an agent waiting on a question gets it as the answer, a finished agent continues its session in a new run. Returns how it was delivered.",
		promptSnippet: "Message, steer or answer an agent on the agent board",
		parameters: Type.Object({
			id: Type.String({ description: "Row id" }),
			text: Type.String({ description: "The message, exactly as the agent should read it" }),
			followUp: Type.Optional(
				Type.Boolean({ description: "Working agent: deliver after its current turn instead of steering now" }),
			),
		}),
		async execute(_toolCallId, params) {
			const result = await (await load.service()).reply(params.id, params.text, { followUp: params.followUp });
			const r = await load.runtime();
			const text = `${params.id}: ${r.DELIVERY_TEXT[result.delivery]}\n${r.describeRow(result.row)}`;
			return { content: [{ type: "text", text }], details: { id: params.id, delivery: result.delivery } };
		},
	});

	pi.registerTool({
		name: "board_status",
		label: "Board status",
		description:
			"Show agent board rows: one row by id, or all active (non-archived) rows with state, summary and any question.",
		promptSnippet: "Check background agents on the agent board",
		parameters: Type.Object({
			id: Type.Optional(Type.String({ description: "Row id; omit for all rows" })),
		}),
		async execute(_toolCallId, params) {
			const service = await load.service();
			const r = await load.runtime();
			if (params.id) {
				const row = await service.get(params.id);
				if (!row) throw new Error(`no such row: ${r.inert(params.id)}`);
				return { content: [{ type: "text", text: r.describeRow(row) }], details: { ids: [row.id] } };
			}
			const rows = await r.listSupervised(service, { slim: true });
			const text = rows.length ? rows.map(r.describeRow).join("\n") : "The board has no rows.";
			return { content: [{ type: "text", text }], details: { ids: rows.map((r) => r.id) } };
		},
	});
}
