/**
 * Shapes of every store file, checked on read. A file that does not match is an error naming the
 * file and the field (`meta.json: /name must be string`); it is never repaired or rewritten.
 * Unknown extra fields are allowed so a newer runner's files stay readable by an older reader.
 */
import { Type, type Static, type TSchema } from "typebox";
import { Compile } from "typebox/compile";
import { Value } from "typebox/value";

const Str = Type.String();
const Num = Type.Number();
const OptStr = Type.Optional(Str);
const OptNum = Type.Optional(Num);

export const RunStateSchema = Type.Enum(["queued", "working", "needs_input", "completed", "idle", "failed", "stopped", "error"]);
const ThinkingSchema = Type.Enum(["off", "minimal", "low", "medium", "high", "xhigh"]);
const WorktreeModeSchema = Type.Enum(["none", "auto", "worktree"]);

export const MetaSchema = Type.Object({
	// Any number: a newer writer may bump it; the fields below are what this reader needs.
	version: Num,
	id: Str,
	name: Str,
	cwd: Str,
	runCwd: Str,
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
});

const UsageSchema = Type.Object({
	input: Num,
	output: Num,
	cacheRead: Num,
	cacheWrite: Num,
	totalTokens: Num,
	cost: Num,
});

const EventSchema = Type.Object({ at: Num, text: Str });

const LiveSchema = Type.Object({
	text: OptStr,
	tool: Type.Optional(Type.Object({ name: Str, detail: Str, startedAt: Num })),
	waitingSince: OptNum,
	retry: Type.Optional(Type.Object({ attempt: Num, max: Num, reason: Str, at: Num })),
	compactingSince: OptNum,
});

const ReceiptSchema = Type.Object({
	id: Str,
	status: Type.Enum(["pending", "delivered", "rejected"]),
	as: Type.Optional(Type.Enum(["steer", "followUp", "answer"])),
	at: Num,
	reason: OptStr,
	preview: Str,
});

export const StatusSchema = Type.Object({
	version: OptNum,
	runId: OptStr,
	rowId: OptStr,
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
	questionSource: Type.Optional(Type.Enum(["tool", "heuristic"])),
	error: OptStr,
	stderrTail: OptStr,
	exitCode: Type.Optional(Type.Union([Num, Type.Null()])),
	exitSignal: Type.Optional(Type.Union([Str, Type.Null()])),
	settled: Type.Optional(Type.Boolean()),
	stopRequested: Type.Optional(Type.Boolean()),
	retryFailed: Type.Optional(Type.Boolean()),
	usage: Type.Optional(UsageSchema),
	eventCount: OptNum,
	recentEvents: Type.Array(EventSchema),
	modelSummary: OptStr,
	summary: OptStr,
	live: Type.Optional(LiveSchema),
	model: OptStr,
	receipts: Type.Optional(Type.Array(ReceiptSchema)),
	parked: Type.Optional(Type.Boolean()),
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

export const PrefsSchema = Type.Object({
	cwd: OptStr,
	model: OptStr,
	thinking: Type.Optional(ThinkingSchema),
	worktreeMode: Type.Optional(WorktreeModeSchema),
});

export type MetaShape = Static<typeof MetaSchema>;
export type StatusShape = Static<typeof StatusSchema>;
export type ProcessRecordShape = Static<typeof ProcessRecordSchema>;
export type SlotOwnerShape = Static<typeof SlotOwnerSchema>;
export type PrefsShape = Static<typeof PrefsSchema>;

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
