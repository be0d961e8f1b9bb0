// Fetch-back through a landing repository: a bare repository of the board's (<store>/targets/.landing/
// <repo key>.git) whose objects are the user's repository's own (GIT_OBJECT_DIRECTORY). A fetch made
// in the user's repository checks connectivity against every ref it has, every worktree's HEAD
// included, and `git worktree add` (a dispatch, meanwhile) first writes a placeholder HEAD: "fatal: bad
// object worktrees/<another id>/HEAD". The landing repository has no worktrees and only our refs; the
// objects land in the user's store, and the refs are then set there with one update-ref. It never
// collects garbage (its refs are not the repository's: a gc there would prune the user's objects).
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ensureBare, git } from "../far/git-workspace.mjs";

/** Settings that keep git from ever collecting garbage or writing extras in the landing repository. */
const LANDING_CONFIG = [
	["gc.auto", "0"],
	["gc.autoDetach", "false"],
	["gc.pruneExpire", "never"],
	["maintenance.auto", "false"],
	["fetch.writeCommitGraph", "false"],
	["core.logAllRefUpdates", "false"],
];

/** Where a repository's landing is. @param {string} storeDir @param {string} repoKey */
export const landingPath = (storeDir, repoKey) => join(storeDir, "targets", ".landing", `${repoKey}.git`);

/** The objects dir of the repository `repo` (any of its worktrees). @param {string} repo */
export function objectsOf(repo) {
	const dotGit = join(repo, ".git");
	const common = existsSync(join(dotGit, "HEAD"))
		? dotGit
		: resolve(repo, git(repo, ["rev-parse", "--git-common-dir"]));
	return join(common, "objects");
}

/** Creates the landing when missing, its settings in place before any fetch sees it. @param {string} landing */
export function ensureLanding(landing) {
	ensureBare(landing, { config: LANDING_CONFIG, parentMode: 0o700 });
}

/**
 * @typedef {object} LandingFetch
 * @property {string} repo        the user's repository (the refs `to` end up there)
 * @property {string} landing
 * @property {import("./git-travel.mjs").GitRemote} remote
 * @property {{ from: string, to: string }[]} refs   what to fetch, and the ref it becomes (in both repositories)
 * @property {string[]} haves     commits the repository has that the fetch may build on (a run's base)
 */

/** @param {LandingFetch} fetch */
function fetchArgs(fetch) {
	// Each once: the rows of a burst share their base, and update-ref refuses one ref named twice.
	const haves = [...new Set(fetch.haves)].filter((sha) => /^[0-9a-f]{40,64}$/.test(sha));
	const objects = { GIT_OBJECT_DIRECTORY: objectsOf(fetch.repo) };
	const env = { ...process.env, ...fetch.remote.env, GIT_TERMINAL_PROMPT: "0", ...objects };
	// What the fetch may build on: the landing's own refs (the last fetch) and these commits.
	const seed = haves.map((sha) => `update refs/have/${sha} ${sha}\n`).join("");
	const args = [
		"--git-dir",
		fetch.landing,
		"fetch",
		"-q",
		"--no-tags",
		"--no-write-fetch-head",
		"--no-auto-maintenance",
		fetch.remote.url,
		...fetch.refs.map((ref) => `+${ref.from}:${ref.to}`),
	];
	return { env, seed, args, objects };
}

/** The refs as the landing has them now, set in the repository. @param {LandingFetch} fetch @returns {Map<string, string>} */
function copyRefs(fetch) {
	/** @type {Map<string, string>} */
	const got = new Map();
	const listed = git(fetch.landing, [
		"for-each-ref",
		"--format=%(objectname) %(refname)",
		...fetch.refs.map((ref) => ref.to),
	]);
	for (const line of listed.split("\n").filter(Boolean)) {
		const [sha = "", name = ""] = line.split(" ");
		got.set(name, sha);
	}
	const updates = [...got].map(([name, sha]) => `update ${name} ${sha}\n`).join("");
	if (updates) gitInput(fetch.repo, ["update-ref", "--stdin"], updates);
	return got;
}

/** @param {string} cwd @param {string[]} args @param {string} input @param {NodeJS.ProcessEnv} [env] */
function gitInput(cwd, args, input, env) {
	return git(cwd, args, env, input);
}

/** Synchronous (a container's fetch-back). @param {LandingFetch} fetch */
export function landingFetchSync(fetch) {
	ensureLanding(fetch.landing);
	const { env, seed, args, objects } = fetchArgs(fetch);
	if (seed) gitInput(fetch.landing, ["update-ref", "--stdin"], seed, objects);
	git(dirname(fetch.landing), args, env);
	return copyRefs(fetch);
}

/**
 * The same without blocking the caller: a target's link follows every row of its host meanwhile.
 * @param {LandingFetch} fetch @returns {Promise<Map<string, string>>}
 */
export async function landingFetch(fetch) {
	ensureLanding(fetch.landing);
	const { env, seed, args, objects } = fetchArgs(fetch);
	if (seed) gitInput(fetch.landing, ["update-ref", "--stdin"], seed, objects);
	await gitAsync(dirname(fetch.landing), args, env);
	return copyRefs(fetch);
}

/**
 * git, not blocking (a push or a fetch over the network). Rejects with git's stderr.
 * @param {string} cwd @param {string[]} args @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<string>}
 */
export function gitAsync(cwd, args, env) {
	return new Promise((resolvePromise, reject) => {
		execFile("git", args, { cwd, env: env ?? process.env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
			if (error)
				reject(
					new Error(
						`git ${args.find((a) => !a.startsWith("-") && a !== args[args.indexOf("--git-dir") + 1]) ?? args[0]} in ${cwd}: ${String(stderr).trim() || error.message}`,
					),
				);
			else resolvePromise(String(stdout).trim());
		});
	});
}
