// What a run tells the notifiers, from its runner (the one writer of its status): each question once
// (not each status write), a budget pause once, its end once (completed, failed, or a final question),
// and each answer its supervisor gave. While a supervisor decides a question, its needs-input waits:
// one the supervisor answers is not the person's (they hear "answered", if they asked for it); one it
// leaves to them, or fails on, goes out then. Every event goes into the store's outbox (outbox.mjs),
// which the store's keeper delivers; the keeper is started if none runs.
import { ensureKeeper } from "../keeper/ensure-keeper.mjs";
import { readJsonObject } from "../store/fs-util.mjs";
import { RUN_TAG } from "../store/proc.mjs";
import { rowDirOf } from "../store/store-layout.mjs";
import { join } from "node:path";
import { emitEvent } from "./outbox.mjs";

/**
 * @param {{ storeDir: string, rowId: string, runId: string, maxConcurrent: number, layout?: string }} config
 * @param {() => boolean} [supervised] a supervisor decides this run's questions first (policy.json names its model)
 */
export function runNotices(config, supervised = () => false) {
	// A far run's store has no notifiers: its link's run here is what the person sees.
	const local = !config.layout || config.layout === "store";
	let questions = 0;
	let asked = "";
	let paused = false;
	let ended = false;
	/** The question the supervisor is deciding: its needs-input waits for the decision. @type {{ key: string, text: string } | undefined} */
	let held;
	/**
	 * A question the supervisor left to the person before any status showed it (a target run's link
	 * decides from the mirrored event, ahead of the far status): it goes out when it shows, not held.
	 * @type {string | undefined}
	 */
	let left;
	let name;
	const rowName = () => {
		name ??= String(readJsonObject(join(rowDirOf(config.storeDir, config.rowId), "meta.json"))?.name ?? config.rowId);
		return name;
	};
	/** @param {string} event @param {string} key @param {string} text */
	const emit = (event, key, text) => {
		const written = emitEvent(config.storeDir, {
			key: `${config.runId}:${key}`,
			event,
			rowId: config.rowId,
			runId: config.runId,
			name: rowName(),
			text,
		});
		if (!written) return;
		const env = { ...process.env };
		delete env[RUN_TAG];
		try {
			ensureKeeper(config.storeDir, { node: process.execPath, env, maxConcurrent: config.maxConcurrent });
		} catch {
			// The next keeper delivers it.
		}
	};
	return {
		/** After each status write. @param {import("../life/state-rules.mjs").RunStatus} status */
		observe(status) {
			if (!local) return;
			const waiting = status.state === "needs_input";
			const question = waiting && status.questionSource === "tool" ? String(status.question ?? "") : "";
			if (question && question !== asked) {
				asked = question;
				const key = `question-${++questions}`;
				if (supervised() && question !== left) held = { key, text: question };
				else emit("needs-input", key, question);
				left = undefined;
			} else if (!question) {
				asked = "";
				held = undefined;
			}
			const budget = waiting && status.questionSource === "budget";
			if (budget && !paused) emit("budget", `budget-${questions}-${Date.now()}`, String(status.question ?? ""));
			paused = budget;
			if (typeof status.endedAt === "number" && !ended) {
				ended = true;
				if (status.state === "completed") emit("completed", "end", String(status.summary ?? ""));
				else if (status.state === "failed") emit("failed", "end", String(status.error ?? status.summary ?? ""));
				else if (status.state === "needs_input" && status.questionSource === "heuristic")
					emit("needs-input", "end", String(status.question ?? ""));
			}
		},
		/**
		 * The supervisor answered a question for the person: what was asked, the answer and who decided,
		 * as the report words it ("..." -> "..." by rule rules.md:4).
		 * @param {string} question @param {string} answer @param {string} by "rule <file:line>", "model", "model (<rule>)"
		 */
		answered(question, answer, by) {
			held = undefined;
			if (local) emit("answered", `answer-${questions}`, answeredText(question, answer, by));
		},
		/**
		 * The supervisor decided otherwise (left it to the person, failed): the held question goes out, or
		 * `question` does when a status shows it.
		 * @param {string} [question]
		 */
		leftToPerson(question) {
			if (held && local) emit("needs-input", held.key, held.text);
			else if (!held) left = question;
			held = undefined;
		},
	};
}

/** @param {string} question @param {string} answer @param {string} by */
export function answeredText(question, answer, by) {
	const who = by.startsWith("model") ? `the ${by}` : by;
	return `${question ? `"${question}" -> ` : ""}"${answer}"${who ? ` by ${who}` : ""}`;
}
