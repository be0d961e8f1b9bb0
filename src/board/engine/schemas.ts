/**
 * Shapes of every store file, checked on read: the one source. types.ts derives the TypeScript types
 * from them (Static), the runner's JSDoc points at those types, and the word lists come from
 * runner/life/vocabulary.mjs. A file that does not match is an error naming the file and the field
 * (`meta.json: /name must be string`); it is never repaired or rewritten. Unknown extra fields are
 * allowed so a newer runner's files stay readable by an older reader. run.json and config.json are read
 * by the runner too, which cannot load typebox: they are checked there (runner/life/run-config.mjs,
 * runner/life/board-config.mjs, each target against its kind's fields in runner/kinds/).
 */
import { Type, type Static, type TSchema } from "typebox";
import { Compile } from "typebox/compile";
import { Value } from "typebox/value";
import { REASON_CODES } from "../../../runner/life/reasons.mjs";
import { SCOPES as BUDGET_SCOPES } from "../../../runner/life/budget.mjs";
import {
	DELIVERY_KINDS,
	QUESTION_SOURCES,
	RECEIPT_STATUSES,
	RUN_STATES,
	THINKING_LEVELS,
	WORKTREE_MODES,
} from "../../../runner/life/vocabulary.mjs";

const Str = Type.String();
const Num = Type.Number();
const OptStr = Type.Optional(Str);
const OptNum = Type.Optional(Num);

export const RunStateSchema = Type.Enum(RUN_STATES);
export const ThinkingSchema = Type.Enum(THINKING_LEVELS);
export const WorktreeModeSchema = Type.Enum(WORKTREE_MODES);
export const DeliveryKindSchema = Type.Enum(DELIVERY_KINDS);
export const ReasonCodeSchema = Type.Enum(REASON_CODES);

/** Member of an attempt set (dispatch --count N, or fork N). */
export const AttemptSchema = Type.Object({
	/** Shared by every row of the set. */
	setId: Str,
	/** 1-based position in the set. */
	index: Type.Integer({ minimum: 1 }),
	count: Type.Integer({ minimum: 1 }),
	/** Row whose conversation the set was forked from. */
	forkOf: OptStr,
});

/** Set once the row's branch was merged into the main checkout. */
export const MergedSchema = Type.Object({
	at: Num,
	/** The main checkout's HEAD after the merge. */
	commit: Str,
	/** Branch merged into. */
	into: Str,
});

/** Written just before a merge moves the main checkout, removed when the merge is recorded. */
export const MergeIntentSchema = Type.Object({
	at: Num,
	/** The main checkout's HEAD before the merge. */
	head: Str,
	/** The commit the main checkout is moved to. */
	target: Str,
	into: Str,
});

/** A budget: tokens and/or cost (absent: no limit in that unit). */
export const LimitSchema = Type.Object({
	tokens: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
	cost: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
});

/** rows/<id>/meta.json: the stable part of a row, changed only under the row lock. */
export const MetaSchema = Type.Object({
	// Any number: a newer writer may bump it; the fields below are what this reader needs.
	version: Num,
	id: Str,
	name: Str,
	cwd: Str,
	/** Where the worker runs: cwd, or the matching directory inside the worktree. */
	runCwd: Str,
	/** git toplevel of cwd, when it is a repo. */
	repo: OptStr,
	sessionFile: Str,
	createdAt: Num,
	updatedAt: Num,
	pinned: Type.Boolean(),
	archived: Type.Boolean(),
	model: OptStr,
	thinking: Type.Optional(ThinkingSchema),
	worktreeMode: WorktreeModeSchema,
	worktreePath: OptStr,
	branch: OptStr,
	baseCommit: OptStr,
	ponytailMode: OptStr,
	lastViewedAt: OptNum,
	currentRunId: Str,
	attempt: Type.Optional(AttemptSchema),
	merged: Type.Optional(MergedSchema),
	merging: Type.Optional(MergeIntentSchema),
	/** Where the row runs (a target of config.json); absent: this machine. */
	target: OptStr,
	/** How much this row may spend over all its runs (runner/life/budget.mjs). */
	budget: Type.Optional(LimitSchema),
	/** How much its attempt set may spend, the same on every row of the set. */
	setBudget: Type.Optional(LimitSchema),
	/** The preset it was dispatched with (its extra system text and rules apply to each run). */
	preset: OptStr,
});

export const UsageSchema = Type.Object({
	input: Num,
	output: Num,
	cacheRead: Num,
	cacheWrite: Num,
	totalTokens: Num,
	cost: Num,
});

/** One line of a run's recent events: "tool bash: npm test", "assistant: Done.", "error: ...". */
export const EventSchema = Type.Object({ at: Num, text: Str });

/** What the agent is doing right now; cleared when the run ends. */
export const LiveSchema = Type.Object({
	/** Tail of the assistant text being streamed (bounded). */
	text: OptStr,
	/** Tool running now. */
	tool: Type.Optional(Type.Object({ name: Str, detail: Str, startedAt: Num })),
	/** A model request is out and no token has arrived since this time. */
	waitingSince: OptNum,
	/** pi's auto-retry in progress. */
	retry: Type.Optional(Type.Object({ attempt: Num, max: Num, reason: Str, at: Num })),
	/** Context compaction in progress since this time. */
	compactingSince: OptNum,
});

/** The runner's answer to one message dropped in a run's inbox (receipts/<id>.json, and in status). */
export const ReceiptSchema = Type.Object({
	id: Str,
	status: Type.Enum(RECEIPT_STATUSES),
	as: Type.Optional(DeliveryKindSchema),
	at: Num,
	/** Why it was rejected: `code` for programs, `reason` for people. */
	code: Type.Optional(ReasonCodeSchema),
	reason: OptStr,
	/** First characters of the message, for display. */
	preview: Str,
});

/** A target run's connection, in its mirrored status (the link writes it). */
export const LinkSchema = Type.Object({
	target: Str,
	/** The target could not be reached since this time (ms); the run goes on there. */
	unreachableSince: OptNum,
	/** ssh's (or the engine's) own words for why. */
	reason: OptStr,
	/** What the target holds that this machine's copy could not take (a line or a file over its limit, a tampered file): the end fails with it. */
	flags: Type.Optional(Type.Array(Type.Object({ code: ReasonCodeSchema, file: Str, reason: Str, count: OptNum }))),
});

/** Spend against the budget nearest its limit, as the runner last checked it at a turn's end. */
export const BudgetStatusSchema = Type.Object({
	scope: Type.Enum(BUDGET_SCOPES),
	unit: Type.Enum(["tokens", "cost"]),
	limit: Num,
	spent: Num,
	/** A target's daily budget: whose (the run's target, or the pool that placed it). */
	target: OptStr,
	/** The row's own spend over all its runs. */
	rowSpent: Type.Optional(Type.Object({ tokens: Num, cost: Num })),
	/** The run waits at a turn's end until the budget is raised. */
	paused: Type.Optional(Type.Boolean()),
});

/** The supervisor left the question to the user: why, shown on the row. */
export const SupervisorNoteSchema = Type.Object({ note: Str, at: Num, rule: OptStr });

/** runs/<runId>/status.json: the run's state and live view, written only by its owner. */
export const StatusSchema = Type.Object({
	version: Num,
	runId: Str,
	rowId: Str,
	state: RunStateSchema,
	createdAt: Num,
	updatedAt: Num,
	startedAt: OptNum,
	endedAt: OptNum,
	lastActivityAt: Num,
	currentTool: OptStr,
	latestAssistant: OptStr,
	lastStopReason: OptStr,
	question: OptStr,
	questionOptions: Type.Optional(Type.Array(Str)),
	questionSource: Type.Optional(Type.Enum(QUESTION_SOURCES)),
	error: OptStr,
	stderrTail: OptStr,
	exitCode: Type.Optional(Type.Union([Num, Type.Null()])),
	exitSignal: Type.Optional(Type.Union([Str, Type.Null()])),
	settled: Type.Boolean(),
	stopRequested: Type.Optional(Type.Boolean()),
	retryFailed: Type.Optional(Type.Boolean()),
	usage: UsageSchema,
	eventCount: Num,
	recentEvents: Type.Array(EventSchema),
	modelSummary: OptStr,
	summary: Str,
	live: Type.Optional(LiveSchema),
	/** The model that actually answered (provider/id). */
	model: OptStr,
	receipts: Type.Optional(Type.Array(ReceiptSchema)),
	parked: Type.Optional(Type.Boolean()),
	/** Why the run failed, for programs (e.g. "disk-full"); `error` says it for people. */
	errorCode: Type.Optional(ReasonCodeSchema),
	/** events.jsonl lines the disk had no room for: dropped, and counted here. */
	droppedEvents: OptNum,
	/** A run on a target, as its link mirrors it: which target, and since when it cannot be reached. */
	link: Type.Optional(LinkSchema),
	budget: Type.Optional(BudgetStatusSchema),
	supervisor: Type.Optional(SupervisorNoteSchema),
	/** A far run's turn end held for its link's budget gate (runner/far/far-turn-hold.mjs): what the worker reported. */
	turnHold: Type.Optional(Type.Object({ id: Str, tokens: Num, cost: Num, more: Type.Boolean() })),
});

/**
 * One line of runs/<runId>/events.jsonl: a worker event as the runner compacted it
 * (runner/compact-event.mjs); the fields beside these depend on the event's type.
 */
export const EventLineSchema = Type.Object({
	seq: Type.Integer({ minimum: 1 }),
	at: Num,
	type: Str,
});

/**
 * runner.json / worker.json. The start time is required: a pid alone could have been reused or
 * planted (`{"pid":1}` would make a kill hit every process the user may signal). pid 1 is init and
 * never a worker or runner, so it is refused outright.
 */
export const ProcessRecordSchema = Type.Object({
	pid: Type.Integer({ minimum: 2 }),
	start: Type.String({ minLength: 1 }),
});

/** slots/slot-<n>.json: an empty or half-written file (runner killed mid-create) is invalid, not "busy". */
export const SlotOwnerSchema = Type.Object({
	pid: Type.Integer({ minimum: 2 }),
	start: Type.String({ minLength: 1 }),
	runId: Type.String({ minLength: 1 }),
});

/** dashboard-prefs.json: the last dispatch choices. */
export const PrefsSchema = Type.Object({
	/** The last `where` (a target name, or local). */
	target: OptStr,
	cwd: OptStr,
	model: OptStr,
	thinking: Type.Optional(ThinkingSchema),
	worktreeMode: Type.Optional(WorktreeModeSchema),
});

type Validator = ReturnType<typeof Compile<TSchema>>;
/** Compiled once per schema: Value.Check interprets the schema each call (about 1 ms per status file). */
const compiled = new WeakMap<TSchema, Validator>();

function validatorOf(schema: TSchema): Validator | undefined {
	let validator = compiled.get(schema);
	if (!validator) {
		try {
			validator = Compile(schema);
		} catch {
			// Code generation refused (a locked-down runtime): fall back to the interpreter.
			return undefined;
		}
		compiled.set(schema, validator);
	}
	return validator;
}

/** First shape error of `value`, as "<instance path> <message>", or undefined when it matches. */
export function shapeError(schema: TSchema, value: unknown): string | undefined {
	const validator = validatorOf(schema);
	if (validator ? validator.Check(value) : Value.Check(schema, value)) return undefined;
	for (const error of Value.Errors(schema, value)) {
		const allowed = (error.params as { allowedValues?: unknown[] } | undefined)?.allowedValues;
		const suffix = Array.isArray(allowed) ? ` (${allowed.join(", ")})` : "";
		return `${error.instancePath || "/"} ${error.message}${suffix}`;
	}
	return "does not match its schema";
}

/** Returns `value` typed by `schema`, or throws `<file>: <path> <message>`. */
export function checkShape<T extends TSchema>(schema: T, value: unknown, file: string): Static<T> {
	const error = shapeError(schema, value);
	if (error) throw new Error(`${file}: ${error}`);
	return value as Static<T>;
}
