// Code travel for every row of one target, in a bounded number of git transfers at a time: each is
// one ssh session on the target's connection, and sshd allows ten (MaxSessions) beside the link's
// follow channel. Requests that wait are joined: the base commits of a burst go in one push, and the
// fetch-backs of rows of one repository in one fetch (through the landing repository: landing.mjs),
// with each row fetched alone again when a joined fetch fails (one row's workspace gone).
import { baseRef } from "../far/git-workspace.mjs";
import { fetchRefs, remoteBranchRef, remoteWipRef } from "./git-travel.mjs";
import { gitAsync, landingFetch } from "./landing.mjs";

/** git transfers at once per target: with the follow channel, three ssh sessions. */
export const GIT_LANES = 2;

/**
 * @typedef {object} PushRequest
 * @property {string} repo @property {import("./git-travel.mjs").GitRemote} remote
 * @property {string} rowId @property {string} commit
 */
/**
 * @typedef {object} FetchRequest
 * @property {string} repo @property {import("./git-travel.mjs").GitRemote} remote
 * @property {string} rowId @property {string} landing @property {string} [base]
 */
/**
 * @template R, T
 * @typedef {{ key: string, kind: "push" | "fetch", items: { request: R, resolve: (value: T) => void, reject: (error: Error) => void }[] }} Job
 */

/** @param {number} [lanes] */
export function gitLane(lanes = GIT_LANES) {
	/** @type {Job<any, any>[]} */
	const waiting = [];
	let running = 0;

	/**
	 * @template R, T @param {"push" | "fetch"} kind @param {string} key @param {R} request @returns {Promise<T>}
	 */
	function enqueue(kind, key, request) {
		return new Promise((resolve, reject) => {
			const job = waiting.find((j) => j.kind === kind && j.key === key);
			if (job) job.items.push({ request, resolve, reject });
			else waiting.push({ kind, key, items: [{ request, resolve, reject }] });
			pump();
		});
	}

	function pump() {
		while (running < lanes && waiting.length > 0) {
			const job = /** @type {Job<any, any>} */ (waiting.shift());
			running += 1;
			const work = job.kind === "push" ? pushAll(job) : fetchAll(job);
			void work.finally(() => {
				running -= 1;
				pump();
			});
		}
	}

	/** @param {Job<PushRequest, void>} job */
	async function pushAll(job) {
		const first = job.items[0]?.request;
		if (!first) return;
		const args = ["push", "-q", "--no-verify", "--force"];
		if (first.remote.receivePack) args.push(`--receive-pack=${first.remote.receivePack}`);
		// One refspec per row: a row asked for again while its first push waited (a relaunch after the
		// channel dropped) must not name its ref twice, which git refuses for the whole push.
		const refspecs = [
			...new Map(
				job.items.map(({ request }) => [request.rowId, `${request.commit}:${baseRef(request.rowId)}`]),
			).values(),
		];
		try {
			await gitAsync(first.repo, [...args, first.remote.url, ...refspecs], {
				...process.env,
				...first.remote.env,
				GIT_TERMINAL_PROMPT: "0",
			});
			for (const item of job.items) item.resolve(undefined);
		} catch (error) {
			for (const item of job.items) item.reject(/** @type {Error} */ (error));
		}
	}

	/** @param {Job<FetchRequest, { head: string, wip: string }>} job */
	async function fetchAll(job) {
		const items = job.items;
		const first = items[0]?.request;
		if (!first) return;
		/** @param {typeof items} some */
		const fetchSome = async (some) => {
			const got = await landingFetch({
				repo: first.repo,
				landing: first.landing,
				remote: first.remote,
				refs: some.flatMap(({ request }) => fetchRefs(request.rowId)),
				haves: some.flatMap(({ request }) => (request.base ? [request.base] : [])),
			});
			for (const { request, resolve, reject } of some) {
				const head = got.get(remoteBranchRef(request.rowId));
				const wip = got.get(remoteWipRef(request.rowId));
				if (head && wip) resolve({ head, wip });
				else
					reject(
						new Error(`fetch from ${request.remote.url} brought no branch or wip snapshot of ${request.rowId}`),
					);
			}
		};
		try {
			await fetchSome(items);
		} catch (error) {
			if (items.length === 1) return items[0]?.reject(/** @type {Error} */ (error));
			// One row's refs may be what failed the joined fetch: each alone, so the others still come back.
			for (const item of items) await fetchSome([item]).catch((alone) => item.reject(alone));
		}
	}

	return {
		/** The base commit to refs/agent-board/base/<rowId> of the target's mirror. @param {PushRequest} request @returns {Promise<void>} */
		push: (request) => enqueue("push", `${request.repo}\n${request.remote.url}`, request),
		/** The row's branch and wip snapshot into refs/agent-board/remote[-wip]/<rowId>. @param {FetchRequest} request @returns {Promise<{ head: string, wip: string }>} */
		fetch: (request) => enqueue("fetch", `${request.repo}\n${request.remote.url}`, request),
	};
}
