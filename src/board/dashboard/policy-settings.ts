/**
 * The board settings (S) for policy.json: the supervisor's model (off by default: then nothing answers
 * for the user) and the daily budgets, the board's and each target's. Each is one more SettingEntry; a
 * change is written under policy.json's lock, and a run a daily budget paused goes on at its next poll.
 */
import { formatCost, formatTokens, parseAmount } from "../../../runner/life/budget.mjs";
import { readPolicy, updatePolicy } from "../../../runner/life/policy.mjs";
import { LOCAL_TARGET } from "../../../runner/life/vocabulary.mjs";
import type { SettingEntry } from "./settings-view.ts";
import type { BudgetLimit } from "../engine/types.ts";

const NONE = "none";
const OFF = "off";
const TOKEN_STEPS = [100_000, 500_000, 1_000_000, 5_000_000, 20_000_000];
const COST_STEPS = [1, 5, 20, 100];

/** The offered values with the current one among them (set by hand to another amount, say). */
function withCurrent(values: string[], current: string): string[] {
	return values.includes(current) ? values : [...values, current];
}

function budgetEntry(
	storeDir: string,
	id: string,
	label: string,
	description: string,
	unit: "tokens" | "cost",
	get: (budgets: NonNullable<ReturnType<typeof readPolicy>["policy"]["budgets"]>) => BudgetLimit | undefined,
	set: (
		budgets: NonNullable<ReturnType<typeof readPolicy>["policy"]["budgets"]>,
		limit: BudgetLimit | undefined,
	) => void,
): SettingEntry {
	const show = (limit: BudgetLimit | undefined): string => {
		const value = limit?.[unit];
		return value === undefined ? NONE : unit === "tokens" ? formatTokens(value) : formatCost(value);
	};
	const current = () => show(get(readPolicy(storeDir).policy.budgets ?? {}));
	const steps = unit === "tokens" ? TOKEN_STEPS.map(formatTokens) : COST_STEPS.map(formatCost);
	return {
		id,
		label,
		description,
		values: withCurrent([NONE, ...steps], current()),
		read: current,
		write: async (_deps, value) => {
			await updatePolicy(storeDir, (policy) => {
				policy.budgets ??= {};
				const budgets = policy.budgets;
				const amount = value === NONE ? undefined : parseAmount(value)?.[unit];
				const { [unit]: _dropped, ...rest } = get(budgets) ?? {};
				const next = amount === undefined ? rest : { ...rest, [unit]: amount };
				set(budgets, Object.keys(next).length ? next : undefined);
			});
		},
	};
}

export function policyEntries(storeDir: string, models: readonly string[], targets: readonly string[]): SettingEntry[] {
	const model = () => readPolicy(storeDir).policy.supervisor?.model ?? OFF;
	const supervisor: SettingEntry = {
		id: "supervisor",
		label: "supervisor: the model that answers routine questions",
		description:
			"off: every question waits for you. On: your rules files decide first (~/.pi/agent/agent-board/rules.md, a trusted project's .pi/agent-board/rules.md); /agent-board supervisor shows them",
		values: withCurrent([OFF, ...models], model()),
		read: model,
		write: async (_deps, value) => {
			await updatePolicy(storeDir, (policy) => {
				if (value === OFF) delete policy.supervisor;
				else policy.supervisor = { model: value };
			});
		},
	};
	const day = [
		budgetEntry(
			storeDir,
			"budget:day",
			"daily budget, the whole board (tokens)",
			"a run that crosses it pauses at the end of its turn and asks you to raise or stop",
			"tokens",
			(b) => b.day,
			(b, limit) => {
				if (limit) b.day = limit;
				else delete b.day;
			},
		),
		budgetEntry(
			storeDir,
			"budget:day-cost",
			"daily budget, the whole board (cost)",
			"cost as the provider bills it where it says, else pi's estimate",
			"cost",
			(b) => b.day,
			(b, limit) => {
				if (limit) b.day = limit;
				else delete b.day;
			},
		),
	];
	// Only this machine's rows hold at a turn's end for now (a target's runner runs there): no setting that does nothing.
	const perTarget = targets
		.filter((name) => name === LOCAL_TARGET)
		.map((name) =>
			budgetEntry(
				storeDir,
				`budget:target:${name}`,
				"this machine: daily budget (tokens)",
				"what the rows running on this machine may spend today",
				"tokens",
				(b) => b.targets?.[name],
				(b, limit) => {
					b.targets ??= {};
					const all = b.targets;
					if (limit) all[name] = limit;
					else delete all[name];
				},
			),
		);
	return [supervisor, ...day, ...perTarget];
}
