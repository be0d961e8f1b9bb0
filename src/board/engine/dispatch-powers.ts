/**
 * Powers a row's kind cannot honour are refused at dispatch with the reason, never silently ignored
 * (docs/supervisor.md, "Budgets"): a `$` budget on a model pi has no cost data for (its spend stays
 * $0.00, so it could never be reached). Budgets and the supervisor hold on every kind: a target run's
 * link runs the budget gate (link-budget.mjs) and decides its questions (link-supervisor.mjs). Nothing has
 * started when these throw.
 */
import { join } from "node:path";
import { formatLimit } from "../../../runner/life/budget.mjs";
import { BoardError } from "../../../runner/life/reasons.mjs";
import { readJsonObject } from "../../../runner/store/fs-util.mjs";
import { modelPrice } from "../model-costs.ts";
import type { BudgetLimit, DispatchOptions } from "./types.ts";

/** The model a run uses: the one given, else pi's default (its settings.json), else unknown. */
export function runModel(options: DispatchOptions, agentDir: string): string | undefined {
	if (options.model) return options.model;
	const settings = readJsonObject(join(agentDir, "settings.json"));
	const provider = settings?.defaultProvider;
	const model = settings?.defaultModel;
	return typeof provider === "string" && typeof model === "string" ? `${provider}/${model}` : undefined;
}

/** Every kind holds every power, so only the model can refuse: a `$` budget it has no cost data for. */
export function checkDispatchPowers(options: DispatchOptions, agentDir: string): void {
	const own: [string, BudgetLimit | undefined][] = [
		["its budget", options.budget],
		["its attempt set's budget", options.setBudget],
	];
	const costly = own.find(([, limit]) => limit?.cost !== undefined);
	if (!costly) return;
	const model = runModel(options, agentDir);
	if (model && modelPrice(model) === "unpriced")
		throw new BoardError(
			"invalid",
			`${costly[0]} (${formatLimit(costly[1] ?? {})}) cannot be reached with ${model}: pi has no cost data for that model (its spend stays $0.00). Give a token budget (50k) instead`,
		);
}
