// The seam between the link (target-link.mjs, the local owner of a run that runs elsewhere) and a kind
// of target. The link mirrors files, forwards the inbox, reconnects and records the end the same way
// for every kind; a driver only knows how to launch the far run, follow it, bring its code back and
// stop it. A kind's object (runner/kinds/) gives its driver: ssh's is host-agent.mjs over one
// multiplexed connection, a container's the engine CLI. Types only.

/** @typedef {import("../../src/board/engine/types.ts").TargetSnapshot} TargetSnapshot */

/**
 * One run as the link drives it (built from the local run.json, see target-link.mjs).
 * @typedef {object} LinkRun
 * @property {TargetSnapshot} target
 * @property {string} storeDir      the local store
 * @property {string} rowId
 * @property {string} runId
 * @property {string} runDir        the local run dir (the mirror; only the link writes it)
 * @property {string} sessionFile   the row's local session file
 * @property {string} repo          the local repository the row's worktree belongs to
 * @property {string} worktree      the local worktree, the mirror of the target's workspace
 * @property {string} base          the commit the run starts from (the local branch's head)
 * @property {string} subdir        the run's cwd relative to the workspace ("" at its top)
 * @property {string} agentDir      the user's pi agent dir (a container's pi home is made from it)
 * @property {Record<string, string>} forwarded  --env values, by name (never on a command line)
 * @property {import("../far/far-run.mjs").FarRunConfig} config  what the far run.json is made of (session digest filled by the driver)
 */

/**
 * What a driver reports while it follows a run. Frames are shape-checked (frames.mjs) but their
 * content is the target's: untrusted.
 * @typedef {object} FollowHandlers
 * @property {(frame: import("../far/frames.mjs").Frame) => void} frame   hello, status, event, receipt, session, git, end, error
 * @property {() => void} [started]  launch only: the far runner is running (the link then follows on reconnects)
 * @property {(outcome: { ended: boolean, failure?: { kind: string, reason: string, code?: string } }) => void} close
 *   the stream is over: after an "end" frame (ended), or the connection or target failed (failure.kind:
 *   "unreachable" | "auth" | "host-key-changed" | "host-key-unknown" | "remote" | "protocol" | "missing-agent",
 *   or "gone": the far run's files are gone, nothing there can finish it, and the link ends the run with
 *   `code`). Before the far runner started every failure but "unreachable" fails the launch at once; after,
 *   every failure but "gone" is a lost connection the link reconnects from. `code`: a reason code of
 *   life/reasons.mjs when the far side said why (the row's errorCode).
 */

/**
 * @typedef {object} FollowHandle
 * @property {(message: Record<string, unknown>) => void} deliver  an inbox message ({ id, kind, text?, deliverAs?, at }); idempotent by id at the target
 * @property {() => void} close
 */

/**
 * @typedef {object} TargetDriver
 * @property {(run: LinkRun, on: FollowHandlers) => FollowHandle} launch
 *   ships code, session and config, starts the far runner and follows it from the start, in as few
 *   round trips as the kind allows. Idempotent per run id: a far run that already started is followed.
 * @property {(run: LinkRun, from: { seq: number, sessionBytes: number }, on: FollowHandlers) => FollowHandle} follow
 *   resumes after the last event seq and session byte the local mirror has.
 * @property {(run: LinkRun) => Promise<void>} fetchBack
 *   brings the row's branch and the wip snapshot into refs/agent-board/remote[-wip]/<rowId> of run.repo
 *   (git-travel.mjs layOver puts them in the local worktree).
 * @property {(run: LinkRun) => Promise<{ status?: Record<string, unknown> }>} stop
 *   one-shot stop at the target (the link was dead when the stop came, or it is stopping before following):
 *   the far runner, its worker and tools are ended there and the end recorded there.
 * @property {(run: LinkRun) => void} [finish]
 *   after the end is recorded here: what the kind leaves behind for nothing (a container's pi home).
 */
