/**
 * Read-only transcript of a row's pi session file: one plain line per message part, ready for
 * wrapping by the viewer. Lines are split on "\n" only (session text may contain U+2028).
 */
import { readFile } from "node:fs/promises";

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

/** Turns session JSONL text into transcript entries; malformed lines are reported, not fatal. */
export function parseTranscript(jsonl: string): TranscriptEntry[] {
	const out: TranscriptEntry[] = [];
	for (const line of jsonl.split("\n")) {
		if (!line.trim()) continue;
		let entry: unknown;
		try {
			entry = JSON.parse(line);
		} catch {
			// A half-written last line is normal while the run is live.
			continue;
		}
		if (!isRecord(entry) || entry.type !== "message" || !isRecord(entry.message)) continue;
		const message = entry.message;
		const role = message.role;
		if (role === "user") {
			const text = partsOf(message.content).map((p) => p.text ?? "").join("");
			if (text) out.push({ role: "user", text });
		} else if (role === "assistant") {
			for (const part of partsOf(message.content)) {
				if (part.type === "text" && part.text) out.push({ role: "assistant", text: part.text });
				else if (part.type === "toolCall") out.push({ role: "tool", text: `${part.name ?? "tool"} ${JSON.stringify(part.arguments ?? {})}` });
			}
			if (typeof message.errorMessage === "string" && message.errorMessage) out.push({ role: "error", text: message.errorMessage });
		} else if (role === "toolResult") {
			const text = partsOf(message.content).map((p) => p.text ?? "").join("");
			const name = typeof message.toolName === "string" ? message.toolName : "tool";
			out.push({ role: "tool", text: `${name} -> ${text}` });
		}
	}
	return out;
}

export async function readTranscript(sessionFile: string): Promise<TranscriptEntry[]> {
	try {
		return parseTranscript(await readFile(sessionFile, "utf8"));
	} catch (error) {
		const code = isRecord(error) ? error.code : undefined;
		if (code === "ENOENT") return [{ role: "info", text: "(no session file yet)" }];
		return [{ role: "error", text: `cannot read ${sessionFile}: ${String(error)}` }];
	}
}
