// The supervisor of a target run, in its link (docs/engine.md "A target run's questions are decided by
// its link"): the far runner has neither the store's rules, policy and meta nor the model's key, and the
// link is the run's owner here. It hears the mirrored ask_user start as a local runner hears its
// worker's, runs the same Supervisor (runner/supervisor/supervisor.mjs) with the row's facts (a pool's
// row: `target is` matches the pool and the member), and its answer goes as a person's would: into the
// local inbox, forwarded by link-inbox.mjs, receipted by the far runner. Its note and its events are the
// link's own fields of the mirror (link-mirror.mjs). The notifiers hear the row from here too, the
// needs-input of a question held while the supervisor decides it (runner/notify/run-notices.mjs).
import { join } from "node:path";
import { inboxNames } from "../life/inbox.mjs";
import { readPolicy } from "../life/policy.mjs";
import { runNotices } from "../notify/run-notices.mjs";
import { RUN_TAG } from "../store/proc.mjs";
import { readJsonObject, readTextNoFollow } from "../store/safe-read.mjs";
import { Supervisor } from "../supervisor/supervisor.mjs";
import { readSupervisorLog } from "../supervisor/supervisor-log.mjs";

/** @typedef {ReturnType<typeof import("./link-mirror.mjs").openMirror>} Mirror */

/**
 * The ask_user start a link that had the run before left undecided: it died while its supervisor decided
 * (killed, the machine restarted), so the far side will not send that event again. Its start is in the
 * local events and its end is not, the row still asks it, supervisor.log has no line of the call and no
 * answer to it waits in the inbox (that one the new link forwards as it is).
 * @param {import("../life/run-config.mjs").RunConfig} config @param {import("../life/state-rules.mjs").RunStatus} status
 * @returns {string | undefined} the start's events.jsonl line
 */
export function undecidedQuestion(config, status) {
	if (status.state !== "needs_input" || status.questionSource !== "tool") return undefined;
	let text;
	try {
		text = readTextNoFollow(join(config.runDir, "events.jsonl"));
	} catch {
		// No events here yet, or not a plain file: nothing was asked that this link could know of.
		return undefined;
	}
	/** @type {Map<string, string>} */
	const open = new Map();
	for (const line of text.split("\n")) {
		if (!line.includes('"ask_user"')) continue;
		let event;
		try {
			event = JSON.parse(line);
		} catch {
			continue;
		}
		if (event?.toolName !== "ask_user" || typeof event.toolCallId !== "string") continue;
		if (event.type === "tool_execution_start") open.set(event.toolCallId, line);
		else if (event.type === "tool_execution_end") open.delete(event.toolCallId);
	}
	const last = [...open.entries()].at(-1);
	if (!last) return undefined;
	const [call, line] = last;
	if (readSupervisorLog(config.storeDir).some((entry) => entry.call === call && entry.run === config.runId))
		return undefined;
	const waiting = inboxNames(config.runDir).some(
		(name) => readJsonObject(join(config.runDir, "inbox", name))?.answers === call,
	);
	return waiting ? undefined : line;
}

/**
 * @param {import("../life/run-config.mjs").RunConfig} config the local run.json
 * @param {string} member the target the run is on (a pool's member; the ssh or container target itself)
 */
export function linkSupervisor(config, member) {
	const notices = runNotices(config, () => Boolean(readPolicy(config.storeDir).policy.supervisor?.model));
	/** @type {Mirror | undefined} */
	let mirror;
	let over = false;
	const env = { ...process.env };
	delete env[RUN_TAG];
	const supervise = config.supervise ?? { rules: [] };
	const supervisor = new Supervisor(
		{ ...config, supervise: { ...supervise, target: supervise.target ?? member, member } },
		() => /** @type {Mirror} */ (mirror).status(),
		{
			changed: () => mirror?.changed(),
			note: (text, detail) => {
				mirror?.localEvent({ type: "supervisor", text, ...detail });
				if (detail.decision === "answered")
					notices.answered(String(detail.question ?? ""), String(detail.answer ?? ""), String(detail.by ?? ""));
				// answered-first: a person answered; any other line (asked-you, a failure) leaves it to them.
				else if (detail.decision !== "answered-first") notices.leftToPerson(supervisor.asking?.question);
			},
			over: () => over,
		},
		env,
	);
	/** A far event line the mirror took (new, its shape checked). @param {string} line */
	const onLine = (line) => {
		if (over) return;
		try {
			supervisor.onEvent(JSON.parse(line));
		} catch {
			// The mirror checked it; nothing here to decide.
		}
	};
	return {
		/** What the mirror calls after each write of the status. @param {import("../life/state-rules.mjs").RunStatus} status */
		observe: (status) => notices.observe(status),
		/** The mirror, once it is open (it is made with `observe`); a question left undecided is decided now. @param {Mirror} opened */
		attach(opened) {
			mirror = opened;
			const left = undecidedQuestion(config, opened.status());
			if (left) onLine(left);
		},
		onLine,
		/** The link let go of the run or it ended: a decision still under way is of no use to anyone. */
		close() {
			over = true;
			supervisor.close();
		},
	};
}
