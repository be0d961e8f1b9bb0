// `targets set <name> --max 3 ...`: a target's fields changed in place, each checked as `targets add`
// checks it (its kind's input check; a pool's members must be targets, none a pool). The kind stays; a
// member stays in its pools. The queue reads config.json at each pump, so the change holds for the
// next placement; runs already placed keep the snapshot their run.json took.
import { fieldsOf, invalid, shapeError } from "./kind.mjs";
import { groupError, kindOf, membersOf } from "./kinds.mjs";

/**
 * The target's config with `given` (flag -> its words, as `targets add` takes them) applied.
 * @param {string} name @param {import("./kind.mjs").TargetConfig} config
 * @param {Map<string, string | string[]>} given
 * @param {Record<string, import("./kind.mjs").TargetConfig>} targets the board's targets
 * @returns {import("./kind.mjs").TargetConfig}
 */
export function changedTarget(name, config, given, targets) {
	const kind = kindOf(config);
	const own = new Map(fieldsOf(kind).flatMap(([field, spec]) => (spec.flag ? [[spec.flag, { field, spec }]] : [])));
	if (given.size === 0)
		throw invalid(
			`targets set ${name}: say what to change (${[...own.keys()].filter((flag) => flag !== "--dir-absolute").join(", ")})`,
		);
	/** @type {Record<string, unknown>} */
	const input = { ...config };
	for (const [flag, value] of given) {
		const known = own.get(flag);
		if (!known) throw invalid(`targets set ${name}: ${flag} is not a field of a ${kind.what} target`);
		const { field, spec } = known;
		if (spec.type === "number") {
			const text = String(value);
			if (!/^\d+(\.\d+)?$/.test(text)) throw invalid(`${flag} needs a number, got ${JSON.stringify(text)}`);
			input[field] = Number(text);
		} else if (spec.type === "flag") input[field] = true;
		else input[field] = value;
	}
	/** @type {Record<string, unknown>} */
	const next = { ...config };
	for (const [flag] of given) {
		const { field, spec } = /** @type {{ field: string, spec: import("./kind.mjs").Field }} */ (own.get(flag));
		const value = spec.input ? spec.input(input[field], input) : input[field];
		if (spec.inputOnly) continue;
		next[field] = Array.isArray(value) ? [...value] : value;
	}
	const shape = shapeError(kind, next);
	if (shape) throw invalid(`targets set ${name}: ${shape.slice(1)}`);
	const changed = /** @type {import("./kind.mjs").TargetConfig} */ (next);
	if (membersOf(changed)) {
		const problem = groupError(changed, targets);
		if (problem) throw invalid(`targets set ${name}: ${problem}`);
	}
	return changed;
}

/**
 * The config drained (it takes no new run; its runs finish) or taken back.
 * @param {import("./kind.mjs").TargetConfig} config @param {boolean} drained
 * @returns {import("./kind.mjs").TargetConfig}
 */
export function drainedTarget(config, drained) {
	const { drained: _was, ...rest } = config;
	return drained ? { ...rest, drained: true } : rest;
}
