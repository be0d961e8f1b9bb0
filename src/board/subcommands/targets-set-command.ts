/**
 * `targets set <name> --max 3 ...` and `targets drain|undrain <name>`, parsed before anything runs. The
 * flags are `targets add`'s (any kind's: which fit the target's kind is the engine's check, which knows
 * it); the kind's own flag may change too (`--ssh newhost`), the kind may not.
 */
import { fieldsOf } from "../../../runner/kinds/kind.mjs";
import { allKinds } from "../../../runner/kinds/kinds.mjs";
import { sanitizeText } from "../engine/sanitize.ts";
import type { TargetView } from "../engine/types.ts";

export type TargetsChangeParsed =
	| { ok: true; action: "set"; name: string; given: Map<string, string | string[]> }
	| { ok: true; action: "drain" | "undrain"; name: string }
	| { ok: false; error: string };

/** Each flag any kind takes, and its type. */
function flagTypes(): Map<string, { type: string; field: string }> {
	const flags = new Map<string, { type: string; field: string }>();
	for (const kind of allKinds())
		for (const [field, spec] of fieldsOf(kind)) if (spec.flag) flags.set(spec.flag, { type: spec.type, field });
	return flags;
}

export function parseTargetsChange(action: "set" | "drain" | "undrain", words: string[]): TargetsChangeParsed {
	const [name, ...rest] = words;
	if (!name || name.startsWith("--")) return { ok: false, error: `targets ${action} needs a target's name` };
	if (action !== "set") {
		if (rest.length > 0) return { ok: false, error: `targets ${action}: unexpected ${JSON.stringify(rest[0])}` };
		return { ok: true, action, name };
	}
	const known = flagTypes();
	const given = new Map<string, string | string[]>();
	for (let i = 0; i < rest.length; i += 2) {
		const flag = rest[i] ?? "";
		const spec = known.get(flag);
		if (!spec) return { ok: false, error: `targets set: unknown option ${JSON.stringify(flag)}` };
		if (spec.type === "flag") {
			given.set(flag, "true");
			i -= 1;
			continue;
		}
		const value = rest[i + 1];
		if (value === undefined) return { ok: false, error: `targets set: ${flag} needs a value` };
		const before = given.get(flag);
		if (spec.field === "env") given.set(flag, [...(Array.isArray(before) ? before : []), value]);
		else if (before !== undefined) return { ok: false, error: `targets set: ${flag} given twice` };
		else given.set(flag, value);
	}
	if (given.size === 0) return { ok: false, error: `targets set ${name}: say what to change (--max <n>, ...)` };
	return { ok: true, action, name, given };
}

/** What a change did, in one line. */
export function changedText(action: "set" | "drain" | "undrain", view: TargetView): string {
	const name = sanitizeText(view.name);
	if (action === "set")
		return `changed target ${name}: ${sanitizeText(view.where)}, up to ${view.max} at a time (from its next placement)`;
	if (action === "drain")
		return `drained ${name}: it takes nothing new${view.running > 0 ? `; its ${view.running} running finish there` : ""}${view.queued > 0 ? `; ${view.queued} queued wait` : ""} (undo: targets undrain ${name})`;
	return `${name} takes runs again`;
}
