/**
 * Headless close ritual: when an opted-in `pi -p` run has printed the task's answer, pi runs one
 * more turn in which the model writes the session-handoff note, before the process exits.
 *
 * How pi 1.6's print mode picks what it prints (dist/modes/print-mode.js): after the last prompt
 * it takes the last message of the session's context (session.state.messages, the projection pi
 * rebuilds after every boundary commit) and, if it is an assistant message, writes each text
 * block plus "\n" to stdout (exit 1 if it was cut off at the token limit); an error or abort goes
 * to stderr with exit 1. Then it disposes the runtime, which emits `session_shutdown` and awaits
 * its handlers, and only then returns.
 *
 * Measured with real pi 1.6 and the faux model (the kept cases are in tests/ritual-e2e.test.ts; the
 * rejected variants were throwaway extensions run the same way):
 * - A ritual continued from `agent_before_settle` (this module's first version) is the context's
 *   last message, so print mode printed the ritual's reply instead of the answer (issue 12).
 * - Continuing from `agent_before_settle` and hiding the ritual's messages with `context_edit`
 *   entries at the ritual's own settle does restore the answer byte for byte, but with two
 *   prompts (`pi -p "a" "b"`) the ritual runs after "a": the extension cannot tell which settle is
 *   the last, so the note misses "b"'s work, and the session keeps the ritual hidden from later
 *   context. Rewriting the ritual's reply in `message_end` would print the answer by falsifying the
 *   transcript.
 * - `session_shutdown` with reason "quit" fires once, after print mode has written stdout and
 *   fixed its exit code, and pi awaits it before returning. A turn started there with
 *   `sendMessage(..., { triggerTurn: true })` runs normally (tools, retries, `agent_settled`), so
 *   the note exists when `pi -p` returns, stdout is untouched whatever the ritual does, and with
 *   several prompts the ritual follows the last one. That is the mechanism used here.
 *
 * The ritual runs only when the context's last message is an answer print mode exits 0 with
 * (see outcome.ts), so a failed, cut-off or signalled task keeps its exit 1 and gets no ritual.
 * Its one-line reply goes nowhere: on success stdout and stderr are exactly what they would be
 * without the ritual. A failed ritual cannot change the exit code (already fixed) and leaves one
 * line on stderr saying why. Print mode only: json and rpc consumers would get an unrequested
 * turn in their event stream, and the TUI user closes sessions themselves.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { RitualGuard } from "./guard.ts";
import type { SettleSignal } from "./turn.ts";

/**
 * Registers the ritual's handlers; its code loads when a print run ends in a project that may have opted
 * in (one with `.tasks/`): pi's start-up and every other run pay for one module.
 */
export function registerCloseRitual(pi: ExtensionAPI): void {
	let guard: RitualGuard | undefined;
	/** Made before the ritual's turn starts: only that turn's settle is waited for. */
	let settle: SettleSignal | undefined;

	pi.on("session_start", () => {
		guard?.reset();
	});

	pi.on("agent_settled", () => {
		settle?.settled();
	});

	pi.on("session_shutdown", async (event, ctx) => {
		// "quit" is process exit; new/resume/fork/reload replace the session and are not an end.
		if (event.reason !== "quit" || ctx.mode !== "print") return;
		// pi aborts any run before shutdown; a session still busy here is not ours to drive.
		if (!ctx.isIdle()) return;
		// Opting in needs .tasks/ (opt-in.ts): without it nothing more is read or loaded.
		if (!existsSync(join(ctx.cwd, ".tasks"))) return;
		const [
			{ RitualGuard },
			{ listNotes, newNotes },
			{ isOptedIn },
			{ judgeRitual, messagesFrom, taskCompleted },
			{ probeProject },
			{ RITUAL_CUSTOM_TYPE, ritualPrompt },
			{ failureLine },
			{ runTurn, SettleSignal },
		] = await Promise.all([
			import("./guard.ts"),
			import("./notes.ts"),
			import("./opt-in.ts"),
			import("./outcome.ts"),
			import("./probe.ts"),
			import("./prompt.ts"),
			import("./report.ts"),
			import("./turn.ts"),
		]);
		if (!taskCompleted(ctx.sessionManager.buildSessionProjection().messages)) return;
		if (!isOptedIn(probeProject(ctx.cwd))) return;
		// A claim is never released: a missed ritual is cheaper than a doubled one.
		guard ??= new RitualGuard();
		if (!guard.claim(ctx.cwd)) return;

		const notesBefore = listNotes(ctx.cwd);
		settle = new SettleSignal();
		const started = await runTurn(pi, ctx, settle, RITUAL_CUSTOM_TYPE, ritualPrompt());
		const result = started
			? judgeRitual(
					messagesFrom(ctx.sessionManager.buildSessionProjection().messages, RITUAL_CUSTOM_TYPE),
					newNotes(notesBefore, listNotes(ctx.cwd)),
				)
			: { ok: false as const, reason: "pi did not start the ritual turn" };
		if (!result.ok) console.error(failureLine(result.reason));
	});
}
