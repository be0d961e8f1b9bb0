/**
 * Read-only transcript of a row's pi session: pi's own parser and session tree (SessionManager,
 * in memory, so the live file is never rewritten), following the current branch only; abandoned
 * branches do not show. Every text is sanitised: it comes from the worker.
 */
import { readFile } from "node:fs/promises";
import {
	parseSessionEntries,
	SessionManager,
	type FileEntry,
	type SessionEntry,
} from "@earendil-works/pi-coding-agent";
import type { Receipt } from "../engine/types.ts";
import { clean, cleanBlock } from "./row-text.ts";

/** How a message the user sent reached the agent: steered in, queued after a turn, answered a question, or began a new run. */
export type SentKind = "steer" | "followUp" | "answer" | "reply";

export interface TranscriptEntry {
	role: "user" | "assistant" | "tool" | "error" | "info";
	text: string;
	/** A user message after the first prompt: how it was sent. */
	sent?: SentKind;
	/** Delivered to the agent, not yet in its session (a steer waits for the current step to end). */
	waiting?: boolean;
	/** An answer the supervisor gave: who decided it ("rule <file:line>", "model"); absent: the person's. */
	by?: string;
}

interface ContentPart {
	type?: string;
	text?: string;
	name?: string;
	arguments?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function partsOf(content: unknown): ContentPart[] {
	if (typeof content === "string") return [{ type: "text", text: content }];
	if (!Array.isArray(content)) return [];
	return content.filter(isRecord) as ContentPart[];
}

/** Entries of the current branch (root to leaf) as transcript lines. */
export function transcriptFromEntries(entries: readonly SessionEntry[]): TranscriptEntry[] {
	const out: TranscriptEntry[] = [];
	for (const entry of entries) {
		if (entry.type !== "message") continue;
		const message: unknown = entry.message;
		if (!isRecord(message)) continue;
		const role = message.role;
		if (role === "user") {
			const text = partsOf(message.content)
				.map((p) => p.text ?? "")
				.join("");
			if (text) out.push({ role: "user", text: cleanBlock(text) });
		} else if (role === "assistant") {
			for (const part of partsOf(message.content)) {
				if (part.type === "text" && part.text) out.push({ role: "assistant", text: cleanBlock(part.text) });
				else if (part.type === "toolCall")
					out.push({
						role: "tool",
						text: cleanBlock(`${part.name ?? "tool"} ${JSON.stringify(part.arguments ?? {})}`),
					});
			}
			if (typeof message.errorMessage === "string" && message.errorMessage)
				out.push({ role: "error", text: cleanBlock(message.errorMessage) });
		} else if (role === "toolResult") {
			const text = partsOf(message.content)
				.map((p) => p.text ?? "")
				.join("");
			const name = typeof message.toolName === "string" ? message.toolName : "tool";
			// An answer to ask_user is the user's message, where it landed: the tool's result.
			const details = isRecord(message.details) ? message.details : {};
			if (name === "ask_user" && details.answered === true && typeof details.answer === "string")
				out.push({
					role: "user",
					text: cleanBlock(details.answer),
					sent: "answer",
					...(typeof details.answeredBy === "string" && details.answeredBy
						? { by: clean(details.answeredBy) }
						: {}),
				});
			else out.push({ role: "tool", text: cleanBlock(`${name} -> ${text}`) });
		}
	}
	return out;
}

/** The runner's preview of a message (its first characters, whitespace folded, "..." when cut) as a prefix to match. */
function previewPrefix(preview: string): string {
	return fold(preview.endsWith("...") ? preview.slice(0, -3) : preview);
}

function fold(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}

/** A delivered steer or follow-up: its receipt says how it went in. */
type SentReceipt = Pick<Receipt, "status" | "as" | "preview">;

function steerOrFollowUp(receipt: SentReceipt): receipt is SentReceipt & { as: "steer" | "followUp" } {
	return receipt.status === "delivered" && (receipt.as === "steer" || receipt.as === "followUp");
}

/**
 * Marks the user messages after the first prompt with how they were sent: a delivered steer or
 * follow-up receipt (in order, matched on its preview) names it; an unmatched one began a new run.
 * Receipts no message matched are returned: delivered, not yet in the session.
 */
export function markSent(entries: TranscriptEntry[], receipts: readonly SentReceipt[]): SentReceipt[] {
	const open = receipts.filter(steerOrFollowUp);
	let first = true;
	for (const entry of entries) {
		if (entry.role !== "user" || entry.sent === "answer") continue;
		if (first) {
			first = false;
			continue;
		}
		const text = fold(entry.text);
		const at = open.findIndex((receipt) => text.startsWith(previewPrefix(receipt.preview)));
		const receipt = at >= 0 ? open.splice(at, 1)[0] : undefined;
		entry.sent = receipt?.as === "steer" || receipt?.as === "followUp" ? receipt.as : "reply";
	}
	return open;
}

/**
 * The transcript with every message the user sent marked; the current run's delivered messages that
 * are not in the session yet follow at its end, marked waiting.
 */
export function withSent(
	entries: readonly TranscriptEntry[],
	earlier: readonly SentReceipt[],
	current: readonly SentReceipt[] = [],
): TranscriptEntry[] {
	const out = entries.map((entry) => ({ ...entry }));
	const unmatched = markSent(out, [...earlier, ...current]);
	for (const receipt of current) {
		if (!unmatched.includes(receipt) || !steerOrFollowUp(receipt)) continue;
		out.push({ role: "user", text: cleanBlock(receipt.preview), sent: receipt.as, waiting: true });
	}
	return out;
}

/** Session JSONL to transcript entries along the current branch; a half-written last line is skipped. */
export function parseTranscript(jsonl: string): TranscriptEntry[] {
	const entries: FileEntry[] = parseSessionEntries(jsonl);
	const session = SessionManager.inMemory(undefined, undefined, entries);
	return transcriptFromEntries(session.getBranch());
}

export async function readTranscript(sessionFile: string): Promise<TranscriptEntry[]> {
	try {
		return parseTranscript(await readFile(sessionFile, "utf8"));
	} catch (error) {
		const code = isRecord(error) ? error.code : undefined;
		if (code === "ENOENT") return [{ role: "info", text: "(no session file yet)" }];
		return [{ role: "error", text: `cannot read the session: ${String(error)}` }];
	}
}
