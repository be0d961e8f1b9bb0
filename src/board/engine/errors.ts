/**
 * A refusal or failure of the engine: `code` for programs to branch on (runner/life/reasons.mjs lists
 * them), the message for people. Callers compare codes, never message text.
 */
import type { ReasonCode } from "../../../runner/life/reasons.mjs";

export class BoardError extends Error {
	readonly code: ReasonCode;
	// No parameter properties: benches and test children load this file with Node's strip-only TypeScript.
	constructor(code: ReasonCode, message: string, options?: { cause?: unknown }) {
		super(message, options);
		this.name = "BoardError";
		this.code = code;
	}
}

/** The code of a BoardError, or undefined for any other error. */
export function codeOf(error: unknown): ReasonCode | undefined {
	return error instanceof BoardError ? error.code : undefined;
}
