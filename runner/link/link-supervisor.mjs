// The supervisor of a target run, in its link (docs/engine.md "A target run's questions are decided by
// its link"): the far runner has neither the store's rules, policy and meta nor the model's key, and the
// link is the run's owner here. It hears the mirrored ask_user start as a local runner hears its
// worker's, runs the same Supervisor (runner/supervisor/supervisor.mjs) with the row's facts (a pool's
// row: `target is` matches the pool and the member), and its answer goes as a person's would: into the
// local inbox, forwarded by link-inbox.mjs, receipted by the far runner. Its note and its events are the
// link's own fields of the mirror (link-mirror.mjs). The notifiers hear the row from here too, the
// needs-input of a question held while the supervisor decides it (runner/notify/run-notices.mjs).
import { runNotices } from "../notify/run-notices.mjs";
import { readPolicy } from "../life/policy.mjs";
import { RUN_TAG } from "../store/proc.mjs";
import { Supervisor } from "../supervisor/supervisor.mjs";

/** @typedef {ReturnType<typeof import("./link-mirror.mjs").openMirror>} Mirror */

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
	return {
		/** What the mirror calls after each write of the status. @param {import("../life/state-rules.mjs").RunStatus} status */
		observe: (status) => notices.observe(status),
		/** The mirror, once it is open (it is made with `observe`). @param {Mirror} opened */
		attach(opened) {
			mirror = opened;
		},
		/** A far event line the mirror took (new, its shape checked). @param {string} line */
		onLine(line) {
			if (over) return;
			try {
				supervisor.onEvent(JSON.parse(line));
			} catch {
				// The mirror checked it; nothing here to decide.
			}
		},
		/** The link let go of the run or it ended: a decision still under way is of no use to anyone. */
		close() {
			over = true;
			supervisor.close();
		},
	};
}
