// The supervisor, in the runner of the run it supervises: the runner sees the question first (the
// worker's ask_user call) and lives as long as the run, so it works with no pi open. Woken by a question,
// never by a timer, and only when the user picked a supervisor model (policy.json; default off). It asks
// the rules (decide.mjs), then the model when they leave it to the model, and either answers through
// the same path as a person (a message in the run's inbox, dropped under the row lock, delivered and
// receipted by this runner: a person who answered first makes it come back rejected "answered"), or
// leaves the question to the user with a note on the row ("asked you because: ..."). Every decision is a
// line in the row's events and in <store>/supervisor.log.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readJsonObject, touchNotify } from "../store/fs-util.mjs";
import { withRowLock } from "../store/row-lock.mjs";
import { rowDirOf } from "../store/store-layout.mjs";
import { dropMessage } from "../life/inbox.mjs";
import { readPolicy } from "../life/policy.mjs";
import { breakerNote, DEFAULT_BREAKER } from "./breaker.mjs";
import { answerRefused, askedBecause, decide } from "./decide.mjs";
import { readRules } from "./rules-files.mjs";
import { appendSupervisorLine, readSupervisorLog } from "./supervisor-log.mjs";
import { askModel, requestText } from "./supervisor-model.mjs";

const RECEIPT_WAIT_MS = 15_000;
const RECEIPT_POLL_MS = 10;

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const OTHER_ROWS = 10;

/** @typedef {import("../life/run-config.mjs").RunConfig} RunConfig */
/** @typedef {import("../../src/board/engine/types.ts").RunStatus} RunStatus */
/** @typedef {import("../../src/board/engine/types.ts").Receipt} Receipt */
/** @typedef {{ toolCallId: string, question: string, options?: string[], at: number }} Question */

/**
 * @typedef {object} SupervisorHooks
 * @property {() => void} changed   the status changed
 * @property {(text: string, detail: Record<string, unknown>) => void} note   one line in the row's events
 * @property {() => boolean} over    the run ended (nothing more to answer)
 */

export class Supervisor {
	/**
	 * `status` is the run's status object, or how to get it now: a target run's link mirrors a status the
	 * far runner replaces with each frame (runner/link/link-supervisor.mjs).
	 * @param {RunConfig} config @param {RunStatus | (() => RunStatus)} status @param {SupervisorHooks} hooks @param {NodeJS.ProcessEnv} env
	 */
	constructor(config, status, hooks, env) {
		this.config = config;
		this.statusOf = typeof status === "function" ? status : () => status;
		this.hooks = hooks;
		this.env = env;
		/** @type {Question | undefined} */
		this.asking = undefined;
		/** @type {Set<() => void>} */
		this.kills = new Set();
		/** Calls the supervisor left to the person: their answer closes the breaker. @type {Set<string>} */
		this.leftToYou = new Set();
	}

	/** @returns {RunStatus} */
	get status() {
		return this.statusOf();
	}

	/** Fed every worker event: an ask_user call wakes it; its end clears the note. @param {Record<string, unknown>} event */
	onEvent(event) {
		if (event.toolName !== "ask_user" || typeof event.toolCallId !== "string") return;
		if (event.type === "tool_execution_start") {
			const args = /** @type {Record<string, unknown>} */ (event.args ?? {});
			if (typeof args.question !== "string") return;
			const options = Array.isArray(args.options) ? args.options.filter((o) => typeof o === "string") : undefined;
			this.asking = { toolCallId: event.toolCallId, question: args.question, options, at: Date.now() };
			void this.wake(this.asking).catch((error) =>
				this.hooks.note(`supervisor failed: ${error instanceof Error ? error.message : String(error)}`, {}),
			);
		} else if (event.type === "tool_execution_end" && this.asking?.toolCallId === event.toolCallId) {
			const asked = this.asking;
			this.asking = undefined;
			const result = /** @type {{ details?: { answered?: unknown } } | string | undefined} */ (event.result);
			// A mirrored event (events.jsonl) keeps the result's text only: ask_user's own words for an answer.
			const answered =
				typeof result === "string" ? result.startsWith("The user answered:") : result?.details?.answered === true;
			if (this.leftToYou.has(asked.toolCallId) && answered) {
				this.leftToYou.delete(asked.toolCallId);
				this.log({
					at: asked.at,
					row: this.config.rowId,
					run: this.config.runId,
					call: asked.toolCallId,
					question: asked.question,
					rule: "you",
					decision: "you-answered",
					ms: Date.now() - asked.at,
				});
			}
			// A parked question still waits for the user (in a new run): its note stays with it.
			const parked =
				typeof result === "string"
					? result.startsWith("The user has not answered yet")
					: /** @type {{ details?: { parked?: unknown } } | undefined} */ (result)?.details?.parked === true;
			if (this.status.supervisor && !parked) {
				this.status.supervisor = undefined;
				this.hooks.changed();
			}
		}
	}

	close() {
		for (const kill of this.kills) kill();
		this.kills.clear();
	}

	/** @param {Question} ask */
	async wake(ask) {
		const { policy } = readPolicy(this.config.storeDir);
		const model = policy.supervisor?.model;
		// Off unless the user picked a model for it: nothing runs, the question waits for the user.
		if (!model) return;
		const supervise = this.config.supervise;
		const facts = {
			rowId: this.config.rowId,
			rowName: supervise?.rowName,
			target: supervise?.target,
			member: supervise?.member,
			preset: supervise?.preset,
		};
		const rules = readRules(supervise?.rules ?? []);
		/** @type {import("./decide.mjs").Decision} */
		let decision = decide(ask, rules, facts);
		const tripped = breakerNote(
			readSupervisorLog(this.config.storeDir, Date.now() - 30 * 86_400_000),
			this.config.rowId,
			policy.supervisor?.breaker ?? DEFAULT_BREAKER,
		);
		if (tripped && decision.kind !== "escalate") decision = { kind: "escalate", note: tripped, rule: "breaker" };
		/** @type {import("./supervisor-model.mjs").ModelVerdict | undefined} */
		let verdict;
		if (decision.kind === "model") {
			verdict = await askModel({
				piCommand: this.config.piCommand,
				model,
				request: requestText({
					ask,
					words: rules.words,
					row: {
						id: this.config.rowId,
						name: supervise?.rowName ?? this.config.rowId,
						target: supervise?.target,
						preset: supervise?.preset,
						goal: this.config.prompt,
					},
					transcript: this.transcript(),
					others: this.others(),
				}),
				env: this.env,
				cwd: this.config.storeDir,
				onChild: (kill) => this.kills.add(kill),
			});
			const via = { rule: decision.rule, ...(decision.ruleText ? { ruleText: decision.ruleText } : {}) };
			if (verdict.error)
				decision = {
					kind: "escalate",
					note: askedBecause(verdict.timedOut ? verdict.error : `the supervisor model failed: ${verdict.error}`),
					...via,
				};
			else if (verdict.decision.kind === "ask")
				decision = { kind: "escalate", note: askedBecause(verdict.decision.why), ...via };
			else if (verdict.decision.kind === "invalid")
				decision = {
					kind: "escalate",
					note: askedBecause("the supervisor model's reply was not a decision"),
					...via,
				};
			else decision = { kind: "answer", text: verdict.decision.text, ...via };
			const refused = decision.kind === "answer" ? answerRefused(decision.text) : undefined;
			if (refused) decision = { kind: "escalate", note: refused, ...via };
		}
		if (this.hooks.over()) return;
		const cost = verdict
			? { tokens: verdict.tokens, cost: verdict.cost, ...(verdict.model ? { model: verdict.model } : {}) }
			: {};
		const base = {
			at: ask.at,
			row: this.config.rowId,
			run: this.config.runId,
			call: ask.toolCallId,
			question: ask.question,
			...(ask.options?.length ? { options: ask.options } : {}),
			rule: decision.rule,
			...(decision.ruleText ? { ruleText: decision.ruleText } : {}),
			...cost,
		};
		if (decision.kind === "escalate") {
			this.leftToYou.add(ask.toolCallId);
			// The log line first: whoever sees the note on the row finds the decision logged.
			this.log({ ...base, decision: "asked-you", note: decision.note, ms: Date.now() - ask.at });
			// Only while that question still waits: a person may have answered while the model thought.
			if (this.asking?.toolCallId === ask.toolCallId) {
				this.status.supervisor = { note: decision.note, at: Date.now(), rule: decision.rule };
				// Written now: a link's status is written only on a far frame, and none may follow the question's.
				this.hooks.changed();
			}
			this.hooks.note(`supervisor: ${decision.note} (${decision.rule})`, {
				decision: "asked-you",
				rule: decision.rule,
				note: decision.note,
			});
			return;
		}
		// The transcript credits who decided: the rule (its file:line) or the model.
		const by = verdict ? (decision.rule === "model" ? "model" : `model (${decision.rule})`) : `rule ${decision.rule}`;
		const receipt = await this.answer(ask, decision.text, by);
		const first = receipt?.status === "rejected";
		const outcome = first ? "answered-first" : "answered";
		this.hooks.note(
			first
				? `supervisor: a person answered first; its answer "${decision.text}" was not delivered (${decision.rule})`
				: `supervisor answered: ${decision.text} (${decision.rule})`,
			{ decision: outcome, rule: decision.rule, answer: decision.text, question: ask.question, by },
		);
		this.log({ ...base, decision: outcome, answer: decision.text, ms: (receipt?.at ?? Date.now()) - ask.at });
	}

	/**
	 * The answer goes the way a person's does: into the inbox under the row lock; the runner delivers it
	 * (to that ask_user call only) and writes its receipt.
	 * @param {Question} ask @param {string} text @param {string} [by] who decided ("rule <file:line>", "model")
	 * @returns {Promise<Receipt | undefined>}
	 */
	async answer(ask, text, by) {
		const { storeDir, rowId, runDir } = this.config;
		const id = await withRowLock(rowDirOf(storeDir, rowId), () =>
			dropMessage(runDir, {
				kind: "message",
				text,
				deliverAs: "steer",
				answers: ask.toolCallId,
				from: "supervisor",
				...(by ? { by } : {}),
			}),
		);
		touchNotify(storeDir, rowId);
		// The runner records the receipt in the status it keeps in memory (the same object as ours).
		for (
			const deadline = Date.now() + RECEIPT_WAIT_MS;
			Date.now() < deadline && !this.hooks.over();
			await sleep(RECEIPT_POLL_MS)
		) {
			const receipt = this.status.receipts?.find((candidate) => candidate.id === id);
			if (receipt) return receipt;
		}
		return this.status.receipts?.find((candidate) => candidate.id === id);
	}

	/** The row's recent events, oldest first, as the model reads them. */
	transcript() {
		const now = Date.now();
		return this.status.recentEvents.map(
			(event) => `- ${Math.max(0, Math.round((now - event.at) / 1000))}s ago: ${event.text}`,
		);
	}

	/** The board's other live rows by name (their goals, as far as a name says it). */
	others() {
		const { storeDir, rowId } = this.config;
		let ids = [];
		try {
			ids = readdirSync(join(storeDir, "live")).filter((id) => id !== rowId && !id.startsWith("."));
		} catch {
			return [];
		}
		return ids.slice(0, OTHER_ROWS).flatMap((id) => {
			const meta = readJsonObject(join(rowDirOf(storeDir, id), "meta.json"));
			return typeof meta?.name === "string" ? [{ name: meta.name.slice(0, 120), summary: "" }] : [];
		});
	}

	/** @param {import("./supervisor-log.mjs").SupervisorLine} line */
	log(line) {
		try {
			appendSupervisorLine(this.config.storeDir, line);
		} catch (error) {
			this.hooks.note(`supervisor.log: ${error instanceof Error ? error.message : String(error)}`, {});
		}
	}
}
