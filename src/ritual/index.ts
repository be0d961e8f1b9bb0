/**
 * Headless close ritual: when a `pi -p` run in an opted-in project finishes its task, pi runs
 * one more turn in which the model writes the session-handoff note.
 *
 * Why agent_before_settle with a custom_message continuation (measured on pi 1.6 with the faux
 * model, see tests/ritual-e2e.test.ts): agent_end + sendUserMessage(followUp) and even
 * agent_settled also deliver a turn on 1.6, but agent_end fires once per low-level run, so it
 * also fires for an attempt that auto-retry is about to repeat, and it cannot tell that attempt
 * from a final failure. agent_before_settle is the last actionable boundary, after retries,
 * compaction and queued follow-ups, and it carries pi's own final `outcome`. We skip unless the
 * task completed: a ritual after a failed task would replace the failure that `pi -p` reports
 * (exit 1) with the ritual's success (exit 0). The custom_message reaches the model as a
 * user-role message but bypasses input hooks, so other extensions cannot swallow or rewrite it.
 */
import type { AgentBeforeSettleEvent, AgentBeforeSettleEventResult, ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { RitualGuard } from "./guard.ts";
import { isOptedIn } from "./opt-in.ts";
import { probeProject } from "./probe.ts";
import { RITUAL_CUSTOM_TYPE, ritualPrompt } from "./prompt.ts";

export function registerCloseRitual(pi: ExtensionAPI): void {
	const guard = new RitualGuard();
	// Opt-in is read once per cwd; a project that opts in mid-session is picked up next process.
	const optInByCwd = new Map<string, boolean>();

	const optedIn = (cwd: string): boolean => {
		let known = optInByCwd.get(cwd);
		if (known === undefined) {
			known = isOptedIn(probeProject(cwd));
			optInByCwd.set(cwd, known);
		}
		return known;
	};

	pi.on("session_start", () => {
		guard.reset();
	});

	pi.on("agent_before_settle", (event: AgentBeforeSettleEvent, ctx: ExtensionContext): AgentBeforeSettleEventResult | undefined => {
		// print only: json and rpc consumers would get an unrequested turn in their event stream.
		if (ctx.mode !== "print") return undefined;
		if (event.outcome !== "completed") return undefined;
		if (!optedIn(ctx.cwd)) return undefined;
		// Claimed before the proposal leaves this handler; the ritual turn's own settle finds the
		// claim and ends the run. If pi rejects the proposal, the claim stays: no retry.
		if (!guard.claim(ctx.cwd)) return undefined;
		return {
			entries: [
				...event.entries,
				{ type: "custom_message", customType: RITUAL_CUSTOM_TYPE, content: ritualPrompt(), display: true },
			],
			continue: true,
		};
	});
}
