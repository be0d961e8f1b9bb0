/**
 * Powers a row's kind cannot honour are refused at dispatch with the reason, never silently ignored
 * (docs/supervisor.md, "Budgets"): the supervisor on a row that runs on a target (its questions are not
 * decided there yet), and a `$` budget on a model pi has no cost data for (its spend stays $0.00, so it
 * could never be reached). Budgets hold on every kind (a target run's link runs the gate: link-budget.mjs).
 * Nothing has started when these throw.
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
		// The supervisor answers in the run's runner, on this machine only for now: a target's questions would
		// all wait for the person, its rules (`target is ...` included) never tried.
		const supervisor = policy.supervisor?.model;
		if (supervisor)
			throw new BoardError(
				"invalid",
				`the supervisor (${supervisor}) cannot answer on ${target} yet: its rules and model decide questions of rows on this machine only. Dispatch it on this machine, or turn the supervisor off in S`,
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
