/**
 * Runs one extension-authored turn from inside a `session_shutdown` handler and waits until it
 * is over. The ExtensionAPI can start a turn (`sendMessage` with `triggerTurn`) but not await it:
 * pi starts the run and reports a start failure only as an extension error. So the turn is over
 * when pi emits `agent_settled` for it, or, for a run that failed before it started (which
 * settles nothing), when the session is idle again.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

/** How often the start-failure fallback looks at isIdle(); the settled event normally wins. */
const IDLE_POLL_MS = 100;

/** Resolves waiters on the next agent_settled; the extension forwards that event here. */
export class SettleSignal {
	private waiters: (() => void)[] = [];

	next(): Promise<void> {
		return new Promise((resolve) => this.waiters.push(resolve));
	}

	settled(): void {
		const waiters = this.waiters;
		this.waiters = [];
		for (const resolve of waiters) resolve();
	}
}

/** Resolves on `settled` or once the session is idle, whichever comes first, and stops polling. */
function runEnded(ctx: ExtensionContext, settled: Promise<void>): Promise<void> {
	return new Promise((resolve) => {
		const finish = () => {
			clearInterval(timer);
			resolve();
		};
		const timer = setInterval(() => {
			if (ctx.isIdle()) finish();
		}, IDLE_POLL_MS);
		void settled.then(finish);
	});
}

/**
 * Sends `content` as a custom message that starts a turn, waits for that run to end, and aborts
 * it on SIGTERM/SIGHUP so a signalled `pi -p` still stops (pi's own handler only waits for the
 * shutdown this turn runs in). Returns false when no run started.
 */
export async function runTurn(
	pi: ExtensionAPI,
	ctx: ExtensionContext,
	signal: SettleSignal,
	customType: string,
	content: string,
): Promise<boolean> {
	const settled = signal.next();
	const abort = () => ctx.abort();
	process.once("SIGTERM", abort);
	process.once("SIGHUP", abort);
	try {
		pi.sendMessage({ customType, content, display: true }, { triggerTurn: true });
		// pi marks the session busy synchronously inside sendMessage when it starts a run.
		if (ctx.isIdle()) return false;
		await runEnded(ctx, settled);
		return true;
	} finally {
		process.off("SIGTERM", abort);
		process.off("SIGHUP", abort);
	}
}
