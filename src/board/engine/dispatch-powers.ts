/**
 * Powers a row's kind cannot honour are refused at dispatch with the reason, never silently ignored
 * (docs/supervisor.md, "Budgets"): a budget on a row that runs on a target (its runs do not pause
 * there yet; its questions are decided by its link, runner/link/link-supervisor.mjs), and a `$` budget on a model pi has no cost data for (its spend stays $0.00, so it could
 * never be reached). Nothing has started when these throw.
 */
import { join } from "node:path";
import { formatLimit } from "../../../runner/life/budget.mjs";
import { readPolicy } from "../../../runner/life/policy.mjs";
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

/** @param target the row's target (undefined: this machine) */
export function checkDispatchPowers(
	storeDir: string,
	options: DispatchOptions,
	target: string | undefined,
	agentDir: string,
): void {
	const own: [string, BudgetLimit | undefined][] = [
		["its budget", options.budget],
		["its attempt set's budget", options.setBudget],
	];
	if (target) {
		const { policy } = readPolicy(storeDir);
		const daily: [string, BudgetLimit | undefined][] = [
			[`${target}'s daily budget`, policy?.budgets?.targets?.[target]],
			["the board's daily budget", policy?.budgets?.day],
		];
		const [which, limit] = [...own, ...daily].find(([, given]) => given !== undefined) ?? [];
		if (which && limit)
			throw new BoardError(
				"invalid",
				`${which} (${formatLimit(limit)}) cannot hold on ${target}: a target's rows do not pause at a budget yet. Dispatch it on this machine, or ${daily.some(([name]) => name === which) ? "raise that budget in S" : "without the budget"}`,
			);
	}
	const costly = own.find(([, limit]) => limit?.cost !== undefined);
	if (!costly) return;
	const model = runModel(options, agentDir);
	if (model && modelPrice(model) === "unpriced")
		throw new BoardError(
			"invalid",
			`${costly[0]} (${formatLimit(costly[1] ?? {})}) cannot be reached with ${model}: pi has no cost data for that model (its spend stays $0.00). Give a token budget (50k) instead`,
		);
}
