// Budgets: how much a row, an attempt set, a target (per day) and the whole board (per day) may spend,
// in tokens and/or cost (pi's usage: totalTokens and cost.total, which is the provider's billed cost
// where it reports one, `cost.totalFromProvider`). Pure: amounts, the check a runner makes at the end of
// each turn, and the words a paused row shows.

/** @typedef {{ tokens?: number, cost?: number }} Limit */
/** @typedef {{ tokens: number, cost: number }} Spend */
/** @typedef {"row" | "set" | "target" | "day"} Scope */
/** @typedef {Partial<Record<Scope, Limit>>} Limits */
/** @typedef {Partial<Record<Scope, Spend>>} Spends */
/** @typedef {{ scope: Scope, unit: "tokens" | "cost", limit: number, spent: number }} Crossed */

export const SCOPES = /** @type {const} */ (["row", "set", "target", "day"]);
const SCOPE_WORDS = /** @type {const} */ ({
	row: "this row's",
	set: "the attempt set's",
	target: "the target's daily",
	day: "the board's daily",
});

/** @param {unknown} value */
const isAmount = (value) => typeof value === "number" && Number.isFinite(value) && value > 0;

/**
 * A limit's shape error ("/tokens must be a number > 0"), or undefined. Absent fields are no limit.
 * @param {unknown} value
 */
export function limitError(value) {
	if (value === null || typeof value !== "object" || Array.isArray(value))
		return "must be an object { tokens?, cost? }";
	const limit = /** @type {Record<string, unknown>} */ (value);
	for (const key of ["tokens", "cost"])
		if (limit[key] !== undefined && !isAmount(limit[key])) return `/${key} must be a number > 0`;
	return undefined;
}

/**
 * "50k", "2000", "1.5M" tokens; "$2", "2.5usd", "0.5$" cost. Undefined when the text is no amount.
 * @param {string} text
 * @returns {Limit | undefined}
 */
export function parseAmount(text) {
	const t = text
		.trim()
		.toLowerCase()
		.replace(/,/g, "")
		.replace(/\s*tokens?$/, "")
		.replace(/\s*tok$/, "");
	const cost = /^\$\s*(\d+(?:\.\d+)?)$|^(\d+(?:\.\d+)?)\s*(?:\$|usd|dollars?)$/.exec(t);
	if (cost) {
		const value = Number(cost[1] ?? cost[2]);
		return value > 0 ? { cost: value } : undefined;
	}
	const tokens = /^(\d+(?:\.\d+)?)\s*([km]?)$/.exec(t);
	if (!tokens) return undefined;
	const value = Math.round(Number(tokens[1]) * (tokens[2] === "k" ? 1000 : tokens[2] === "m" ? 1_000_000 : 1));
	return value > 0 ? { tokens: value } : undefined;
}

/** 1234 -> "1.2k", 50000 -> "50k", 2000000 -> "2M". @param {number} n */
export function formatTokens(n) {
	if (n < 1000) return String(Math.round(n));
	if (n < 1_000_000) return `${Number((n / 1000).toFixed(n < 10_000 ? 1 : 0))}k`;
	return `${Number((n / 1_000_000).toFixed(n < 10_000_000 ? 1 : 0))}M`;
}

/** @param {number} n */
export const formatCost = (n) => `$${n < 10 ? n.toFixed(2) : n.toFixed(0)}`;

/** "50k tokens", "$2.00", "50k tokens or $2.00". @param {Limit} limit */
export function formatLimit(limit) {
	const parts = [];
	if (limit.tokens !== undefined) parts.push(`${formatTokens(limit.tokens)} tokens`);
	if (limit.cost !== undefined) parts.push(formatCost(limit.cost));
	return parts.join(" or ") || "no limit";
}

/** @param {Crossed} crossed */
const amount = (crossed) =>
	crossed.unit === "tokens" ? `${formatTokens(crossed.limit)} tokens` : formatCost(crossed.limit);

/**
 * The first limit reached (spent >= limit), most specific scope first, or undefined.
 * @param {Spends} spends @param {Limits} limits
 * @returns {Crossed | undefined}
 */
export function crossedLimit(spends, limits) {
	for (const scope of SCOPES) {
		const limit = limits[scope];
		const spent = spends[scope];
		if (!limit || !spent) continue;
		if (limit.tokens !== undefined && spent.tokens >= limit.tokens)
			return { scope, unit: "tokens", limit: limit.tokens, spent: spent.tokens };
		if (limit.cost !== undefined && spent.cost >= limit.cost)
			return { scope, unit: "cost", limit: limit.cost, spent: spent.cost };
	}
	return undefined;
}

/**
 * The scope nearest its limit (the one the list shows: spend against budget), or undefined without limits.
 * @param {Spends} spends @param {Limits} limits
 * @returns {Crossed | undefined}
 */
export function nearestLimit(spends, limits) {
	/** @type {Crossed | undefined} */
	let best;
	let bestRatio = -1;
	for (const scope of SCOPES) {
		const limit = limits[scope];
		const spent = spends[scope] ?? { tokens: 0, cost: 0 };
		if (!limit) continue;
		for (const unit of /** @type {const} */ (["tokens", "cost"])) {
			const max = limit[unit];
			if (max === undefined) continue;
			const ratio = spent[unit] / max;
			if (ratio > bestRatio) {
				bestRatio = ratio;
				best = { scope, unit, limit: max, spent: spent[unit] };
			}
		}
	}
	return best;
}

/** The raise offered first: double the limit, at least past what is spent. @param {Crossed} crossed */
export function suggestedRaise(crossed) {
	const next = Math.max(crossed.limit * 2, crossed.spent * 1.5);
	return crossed.unit === "tokens" ? formatTokens(Math.ceil(next / 1000) * 1000) : formatCost(Math.ceil(next));
}

/**
 * What a paused row asks, and the choices it offers ("raise to 4k", "stop").
 * @param {Crossed} crossed @param {string} [target] the target whose daily budget it is (named unless "local")
 */
export function pauseQuestion(crossed, target) {
	const words =
		crossed.scope === "target" && target && target !== "local" ? `${target}'s daily` : SCOPE_WORDS[crossed.scope];
	const whose = crossed.scope === "row" ? "" : ` (${words} budget)`;
	return {
		question: `budget reached: ${amount(crossed)}${whose}; raise or stop`,
		options: [`raise to ${suggestedRaise(crossed)}`, "stop"],
	};
}

/**
 * A reply to a paused row: "stop", or a new amount ("raise to 100k", "100k", "$5").
 * @param {string} text
 * @returns {{ stop: true } | { raise: Limit } | undefined}
 */
export function parseBudgetReply(text) {
	const t = text.trim().toLowerCase();
	if (/^(stop|no|cancel)\.?$/.test(t)) return { stop: true };
	const amountText = t.replace(/^(raise|set|increase)(\s+(it|the\s+budget))?(\s+to)?\s+/, "");
	const raise = parseAmount(amountText);
	return raise ? { raise } : undefined;
}

/** @param {Spend} a @param {Spend} b @returns {Spend} */
export const addSpend = (a, b) => ({ tokens: a.tokens + b.tokens, cost: a.cost + b.cost });

export const NO_SPEND = Object.freeze({ tokens: 0, cost: 0 });
