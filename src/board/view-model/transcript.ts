/**
 * Read-only transcript of a row's pi session: pi's own parser and session tree (SessionManager,
 * in memory, so the live file is never rewritten), following the current branch only; abandoned
 * branches do not show. Every text is sanitised: it comes from the worker.
 */
import { readFile } from "node:fs/promises";
import { parseSessionEntries, SessionManager, type FileEntry, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { cleanBlock } from "./row-text.ts";

export interface TranscriptEntry {
	role: "user" | "assistant" | "tool" | "error" | "info";
	text: string;
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
			const text = partsOf(message.content).map((p) => p.text ?? "").join("");
			if (text) out.push({ role: "user", text: cleanBlock(text) });
		} else if (role === "assistant") {
			for (const part of partsOf(message.content)) {
				if (part.type === "text" && part.text) out.push({ role: "assistant", text: cleanBlock(part.text) });
				else if (part.type === "toolCall") out.push({ role: "tool", text: cleanBlock(`${part.name ?? "tool"} ${JSON.stringify(part.arguments ?? {})}`) });
			}
			if (typeof message.errorMessage === "string" && message.errorMessage) out.push({ role: "error", text: cleanBlock(message.errorMessage) });
		} else if (role === "toolResult") {
			const text = partsOf(message.content).map((p) => p.text ?? "").join("");
			const name = typeof message.toolName === "string" ? message.toolName : "tool";
			out.push({ role: "tool", text: cleanBlock(`${name} -> ${text}`) });
		}
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
