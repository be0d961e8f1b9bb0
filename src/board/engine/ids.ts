import { randomBytes } from "node:crypto";
import { ID_PATTERN, isValidId } from "../../../runner/store/store-layout.mjs";
import { inert } from "./sanitize.ts";

export { isValidId };

/** Time-sortable id, safe as a path segment. */
export function newId(prefix: string): string {
	return `${prefix}${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
}

/** Ids become path segments under the store: reject anything that could escape it. */
export function validateId(id: unknown): string {
	if (typeof id !== "string" || !ID_PATTERN.test(id)) {
		throw new Error(
			`invalid row id ${typeof id === "string" ? `"${inert(id)}"` : JSON.stringify(id)}: use letters, digits, "-" and "_" only (no "/", "..", or absolute paths)`,
		);
	}
	return id;
}
