// What a question (or a tool call) proposes to do, as one action class. The default is inverted: the safe
// set is written down (SAFE_ACTIONS) and everything outside it is `unknown`, the person's to answer. A
// list of bad words always misses the next phrasing; a short list of what is known to be harmless does not.
//
// Commands (a code span, a `$ ` line, or a command line in the words) are parsed by shell-quote's parser
// (vendored: the runner ships without node_modules) and every simple command of every pipeline, list,
// subshell, substitution, `-exec`, `xargs`, `sh -c` and `eval` is judged on its own; git by the effect of
// its subcommand. Prose is judged by its verbs: each thing the question proposes to do must be a verb of
// the safe set (go on, write, add, name, pick, run the tests, format...), otherwise it is unknown.
// Pure; shared by the supervisor (questions) and the worker's action gate (tool calls).
import { createRequire } from "node:module";

/** @type {(s: string, env?: (key: string) => string) => Array<string | { op: string, pattern?: string } | { comment: string }>} */
const parseShell = createRequire(import.meta.url)("./vendor/shell-quote-parse.cjs");

/** The closed safe set: the only actions a rule or the supervisor model may answer for the person. */
export const SAFE_ACTIONS = /** @type {const} */ ([
	"continue",
	"read",
	"test-run",
	"format",
	"lint",
	"build",
	"create-file",
]);

/** @typedef {(typeof SAFE_ACTIONS)[number]} SafeAction */
/**
 * `commands`: the simple commands seen (their text); `hard`: it discards, deletes, rewrites history,
 * publishes, installs, changes permissions, kills, reaches the network or leaves the workspace (no rule
 * can allow it); otherwise an unknown command can be allowed by a rule that names it (`command is`).
 * @typedef {{ action: SafeAction | "unknown", why: string, hard: boolean, commands: string[], unknown: string[] }} ActionVerdict
 */

/** @param {string} why @param {string} command */
const hardly = (why, command) => ({ hard: true, why, command });

// ---------------------------------------------------------------- simple commands

const READ_PROGRAMS = new Set(
	"ls cat head tail less more wc grep rg ag pwd echo printf tree file stat du df which type diff cmp uniq cut true false date whoami basename dirname realpath nl column jq".split(
		" ",
	),
);
const TEST_PROGRAMS = new Set(["vitest", "jest", "pytest", "mocha", "ava", "tap", "karma", "phpunit", "rspec"]);
const FORMAT_PROGRAMS = new Set([
	"prettier",
	"black",
	"gofmt",
	"rustfmt",
	"dprint",
	"clang-format",
	"isort",
	"autopep8",
]);
const LINT_PROGRAMS = new Set([
	"eslint",
	"tsc",
	"flake8",
	"mypy",
	"pylint",
	"shellcheck",
	"golangci-lint",
	"stylelint",
	"markdownlint",
	"pyright",
]);
const SCRIPT_CLASSES = /** @type {Record<string, SafeAction>} */ ({
	test: "test-run",
	t: "test-run",
	"test:unit": "test-run",
	"test:e2e": "test-run",
	check: "lint",
	lint: "lint",
	typecheck: "lint",
	"type-check": "lint",
	format: "format",
	fmt: "format",
	prettier: "format",
	build: "build",
	compile: "build",
});
const WRAPPERS = new Set(["time", "nice", "nohup", "command", "builtin", "exec", "env", "stdbuf", "ionice"]);
const INTERPRETERS = new Set([
	"sh",
	"bash",
	"zsh",
	"dash",
	"ksh",
	"fish",
	"python",
	"python3",
	"node",
	"perl",
	"ruby",
	"deno",
	"bun",
	"php",
]);
const NETWORK = new Set([
	"curl",
	"wget",
	"ssh",
	"scp",
	"sftp",
	"rsync",
	"nc",
	"ncat",
	"netcat",
	"telnet",
	"ftp",
	"mosh",
]);
const PROCESS = new Set([
	"kill",
	"pkill",
	"killall",
	"xkill",
	"reboot",
	"shutdown",
	"halt",
	"poweroff",
	"systemctl",
	"service",
	"launchctl",
]);
const PERMISSIONS = new Set(["chmod", "chown", "chgrp", "chattr", "setfacl", "umask"]);
const DELETERS = new Set([
	"rm",
	"rmdir",
	"unlink",
	"shred",
	"truncate",
	"srm",
	"wipe",
	"dd",
	"mkfs",
	"fdisk",
	"parted",
]);
const PACKAGE_MANAGERS = new Set([
	"npm",
	"pnpm",
	"yarn",
	"bun",
	"pip",
	"pip3",
	"pipx",
	"cargo",
	"go",
	"gem",
	"brew",
	"apt",
	"apt-get",
	"dnf",
	"yum",
	"pacman",
	"apk",
	"snap",
	"uv",
	"poetry",
	"composer",
]);
const PUBLISHERS = new Set([
	"kubectl",
	"helm",
	"terraform",
	"pulumi",
	"vercel",
	"netlify",
	"heroku",
	"fly",
	"flyctl",
	"firebase",
	"aws",
	"gcloud",
	"az",
	"gh",
	"docker",
	"podman",
	"psql",
	"mysql",
	"mongo",
	"mongosh",
	"redis-cli",
	"sqlite3",
	"crontab",
]);

// git by effect: what reads, and why the rest is the person's.
const GIT_READ = new Set([
	"status",
	"diff",
	"log",
	"show",
	"blame",
	"rev-parse",
	"ls-files",
	"describe",
	"shortlog",
	"grep",
	"whatchanged",
	"cat-file",
	"ls-tree",
	"help",
	"version",
]);

/**
 * @param {string[]} args git's arguments after global options
 * @param {string} text
 * @returns {{ action?: SafeAction, hard?: boolean, why: string, command: string }}
 */
function judgeGit(args, text) {
	const sub = args[0] ?? "";
	const rest = args.slice(1);
	const has = (/** @type {RegExp} */ re) => rest.some((arg) => re.test(arg));
	if (GIT_READ.has(sub) && !has(/^--output/)) return { action: "read", why: "reads the repository", command: text };
	if (
		sub === "branch" &&
		rest.every((arg) =>
			/^(-a|-r|-v|-vv|--all|--remotes|--list|--show-current|--merged|--no-merged|--contains)$/.test(arg),
		)
	)
		return { action: "read", why: "lists branches", command: text };
	if (sub === "tag" && rest.every((arg) => /^(-l|--list|-n\d*)$/.test(arg)))
		return { action: "read", why: "lists tags", command: text };
	if (sub === "remote" && rest.every((arg) => /^(-v|--verbose|show)$/.test(arg)))
		return { action: "read", why: "lists remotes", command: text };
	if (sub === "stash" && (rest[0] === "list" || rest[0] === "show"))
		return { action: "read", why: "lists stashes", command: text };
	/** @type {Record<string, string>} */
	const effects = {
		checkout: "discards uncommitted changes or moves the work tree",
		restore: "discards uncommitted changes",
		reset: "discards changes or moves the branch",
		clean: "deletes untracked files",
		stash: "hides or drops uncommitted work",
		branch: "deletes, renames or moves a branch",
		push: "publishes to another machine (and may overwrite it)",
		rebase: "rewrites history",
		commit: "writes history",
		"filter-branch": "rewrites history",
		"filter-repo": "rewrites history",
		gc: "deletes unreachable history",
		prune: "deletes unreachable history",
		reflog: "expires or deletes the reflog",
		"update-ref": "moves or deletes a ref",
		tag: "moves or deletes a tag",
		rm: "deletes files",
		mv: "moves files",
		switch: "moves the work tree (and may discard changes)",
		merge: "changes history",
		"cherry-pick": "changes history",
		revert: "changes history",
		am: "changes history",
		apply: "changes files",
		pull: "reaches another machine and changes history",
		fetch: "reaches another machine",
		clone: "reaches another machine",
		worktree: "adds or removes work trees",
		submodule: "reaches another machine",
		config: "changes git's configuration",
		init: "creates a repository",
		replace: "rewrites history",
		notes: "changes history",
		"update-index": "changes the index",
		"read-tree": "overwrites the index",
		"checkout-index": "overwrites files",
		"symbolic-ref": "moves HEAD",
		add: "stages changes",
	};
	const why = effects[sub] ?? "is a git operation no rule can read as safe";
	// What can only be undone from a backup: the person's, whatever a rule says.
	const soft = sub === "add" || sub === "init" || (sub === "commit" && !has(/^--amend$|^--fixup|^--squash/));
	return soft ? { why: `git ${sub} ${why}`, command: text } : hardly(`git ${sub} ${why}`, text);
}

/** Paths that leave the workspace. @param {string} arg */
const outside = (arg) => /^(~|\/(?!dev\/null$)|\.\.(\/|$))/.test(arg) || /(^|\/)\.\.(\/|$)/.test(arg);

/**
 * One simple command (its words, redirections removed), judged.
 * @param {string[]} words
 * @param {number} depth
 * @returns {Array<{ action?: SafeAction, hard?: boolean, why: string, command: string }>}
 */
function judgeSimple(words, depth) {
	let i = 0;
	while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] ?? "")) i++;
	const argv = words.slice(i);
	const text = argv.join(" ");
	if (argv.length === 0) return [];
	const program = (argv[0] ?? "").split("/").at(-1) ?? "";
	const args = argv.slice(1);
	const has = (/** @type {RegExp} */ re) => args.some((arg) => re.test(arg));
	if (depth > 4) return [hardly("nests commands too deep to read", text)];
	if (program === "sudo" || program === "su" || program === "doas")
		return [hardly(`${program} acts as another user`, text)];
	if (WRAPPERS.has(program)) {
		let k = 1;
		while (
			k < argv.length &&
			(/^-/.test(argv[k] ?? "") || /=/.test(argv[k] ?? "") || (program === "nice" && /^\d+$/.test(argv[k] ?? "")))
		)
			k++;
		return k < argv.length
			? judgeSimple(argv.slice(k), depth + 1)
			: [{ action: "read", why: "prints the environment", command: text }];
	}
	if (program === "timeout")
		return judgeSimple(argv.slice(argv.findIndex((a, k) => k > 0 && /^\d/.test(a)) + 1 || argv.length), depth + 1);
	if (program === "eval") return judgeCommandLine(args.join(" "), depth + 1);
	if (INTERPRETERS.has(program)) {
		const c = args.findIndex((arg) => arg === "-c" || arg === "-e" || arg === "--eval" || /^-[a-z]*c$/.test(arg));
		if (c >= 0 && /^(sh|bash|zsh|dash|ksh|fish)$/.test(program))
			return judgeCommandLine(args[c + 1] ?? "", depth + 1);
		if (/^python3?$/.test(program) && args[0] === "-m") {
			const module = args[1] ?? "";
			if (module === "pytest" || module === "unittest")
				return [{ action: "test-run", why: "runs the tests", command: text }];
			if (module === "black" || module === "isort")
				return [{ action: "format", why: "formats the code", command: text }];
			if (module === "mypy" || module === "flake8" || module === "pylint")
				return [{ action: "lint", why: "lints", command: text }];
		}
		if (program === "node" && args[0] === "--test")
			return [{ action: "test-run", why: "runs the tests", command: text }];
		if ((program === "bun" || program === "deno") && args[0] === "test")
			return [{ action: "test-run", why: "runs the tests", command: text }];
		if (c >= 0 || args.length === 0 || args.every((arg) => arg.startsWith("-")))
			return [hardly(`${program} runs code it reads from its input or its arguments`, text)];
		return [{ why: `${program} runs a script no rule names`, command: text }];
	}
	if (program === "xargs") {
		let k = 0;
		while (k < args.length && /^-/.test(args[k] ?? "")) k += /^-[IEdLnPs]$/.test(args[k] ?? "") ? 2 : 1;
		return judgeSimple(args.slice(k).length ? args.slice(k) : ["echo"], depth + 1);
	}
	if (program === "find") {
		/** @type {ReturnType<typeof judgeSimple>} */
		const inner = [];
		for (let k = 0; k < args.length; k++) {
			if (/^-(exec|execdir|ok|okdir)$/.test(args[k] ?? "")) {
				const end = args.findIndex((arg, j) => j > k && (arg === ";" || arg === "+" || arg === "\\;"));
				inner.push(
					...judgeSimple(
						args.slice(k + 1, end < 0 ? undefined : end).filter((arg) => arg !== "{}"),
						depth + 1,
					),
				);
				k = end < 0 ? args.length : end;
			} else if (/^-(delete|fprint|fprintf|fls)$/.test(args[k] ?? ""))
				inner.push(hardly(`find ${args[k]} deletes or writes files`, text));
		}
		if (args.some(outside)) inner.push(hardly("reaches outside the workspace", text));
		return inner.length ? inner : [{ action: "read", why: "finds files", command: text }];
	}
	if (args.some(outside) && program !== "echo" && program !== "printf")
		return [hardly(`${program} reaches outside the workspace (${args.find(outside)})`, text)];
	if (program === "git") {
		let k = 0;
		while (k < args.length && /^-/.test(args[k] ?? "")) k += /^-(C|c)$/.test(args[k] ?? "") ? 2 : 1;
		if (k > 0) return [hardly("git with global options acts where no rule can see", text)];
		return [judgeGit(args, text)];
	}
	if (DELETERS.has(program)) return [hardly(`${program} deletes or destroys data`, text)];
	if (program === "mv") return [hardly("mv moves or overwrites files", text)];
	if (program === "cp" || program === "install" || program === "ln" || program === "tee")
		return [hardly(`${program} may overwrite existing files`, text)];
	if (PERMISSIONS.has(program)) return [hardly(`${program} changes permissions or owners`, text)];
	if (PROCESS.has(program)) return [hardly(`${program} stops processes or the machine`, text)];
	if (NETWORK.has(program)) return [hardly(`${program} reaches another machine`, text)];
	if (program === "sed" && has(/^(-i|--in-place)/)) return [hardly("sed -i rewrites files in place", text)];
	if (program === "sed" || program === "sort") {
		if (has(/^-o$|^--output/)) return [hardly(`${program} -o overwrites a file`, text)];
		return [{ action: "read", why: "reads text", command: text }];
	}
	if (READ_PROGRAMS.has(program)) return [{ action: "read", why: "reads", command: text }];
	if (TEST_PROGRAMS.has(program)) return [{ action: "test-run", why: "runs the tests", command: text }];
	if (FORMAT_PROGRAMS.has(program)) return [{ action: "format", why: "formats the code", command: text }];
	if (LINT_PROGRAMS.has(program)) return [{ action: "lint", why: "lints", command: text }];
	if (program === "biome" || program === "ruff") {
		const sub = args[0];
		if (sub === "format") return [{ action: "format", why: "formats the code", command: text }];
		if (sub === "lint" || sub === "check")
			return [{ action: has(/^--(write|fix|apply)/) ? "format" : "lint", why: "lints", command: text }];
	}
	if (program === "mkdir" || program === "touch")
		return [{ action: "create-file", why: "creates a new file or folder", command: text }];
	if (program === "make") {
		const target = args.find((arg) => !arg.startsWith("-"));
		if (target === undefined || target === "all" || target === "build")
			return [{ action: "build", why: "builds", command: text }];
		if (target === "test" || target === "check")
			return [{ action: "test-run", why: "runs the tests", command: text }];
		if (target === "lint") return [{ action: "lint", why: "lints", command: text }];
		if (target === "format" || target === "fmt") return [{ action: "format", why: "formats", command: text }];
		return [{ why: `make ${target} runs a target no rule names`, command: text }];
	}
	if (
		program === "npx" ||
		program === "pnpx" ||
		(program === "pnpm" && args[0] === "exec") ||
		(program === "yarn" && args[0] === "dlx")
	) {
		const rest = args.filter((arg) => !arg.startsWith("-"));
		const tool = program === "npx" || program === "pnpx" ? rest : rest.slice(1);
		const inner = judgeSimple(tool, depth + 1);
		return inner.every((verdict) => verdict.action)
			? inner
			: [hardly(`${program} may fetch and run a package`, text)];
	}
	if (PACKAGE_MANAGERS.has(program)) {
		const sub = args[0] ?? "";
		const script = sub === "run" || sub === "run-script" ? args[1] : sub;
		const cls = script !== undefined ? SCRIPT_CLASSES[script] : undefined;
		if (
			cls &&
			(sub === "run" || sub === "run-script" || /^(test|t)$/.test(sub) || ["yarn", "pnpm", "bun"].includes(program))
		)
			return [{ action: cls, why: `runs the ${script} script`, command: text }];
		if (program === "cargo" || program === "go") {
			if (sub === "test") return [{ action: "test-run", why: "runs the tests", command: text }];
			if (sub === "fmt") return [{ action: "format", why: "formats", command: text }];
			if (sub === "build" || sub === "check") return [{ action: "build", why: "builds", command: text }];
			if (sub === "vet" || sub === "clippy") return [{ action: "lint", why: "lints", command: text }];
		}
		if (/^(ls|list|outdated|view|info|why|explain|audit)$/.test(sub) && !has(/^--?fix$/))
			return [{ action: "read", why: "lists packages", command: text }];
		if (/^(publish|unpublish|deprecate|owner|dist-tag|login|logout|adduser|token)$/.test(sub))
			return [hardly(`${program} ${sub} publishes or touches credentials`, text)];
		return [hardly(`${program} ${sub || ""} installs, fetches or runs packages`.replace("  ", " "), text)];
	}
	if (PUBLISHERS.has(program)) return [hardly(`${program} reaches services, data or other machines`, text)];
	return [{ why: `\`${program}\` is not a command the supervisor knows to be safe`, command: text }];
}

/**
 * A command line, parsed; every simple command judged.
 * @param {string} line @param {number} [depth]
 * @returns {ReturnType<typeof judgeSimple>}
 */
export function judgeCommandLine(line, depth = 0) {
	/** @type {ReturnType<typeof parseShell>} */
	let entries;
	try {
		entries = parseShell(line, (key) => `$${key}`);
	} catch (error) {
		return [hardly(`the command does not parse (${error instanceof Error ? error.message : String(error)})`, line)];
	}
	/** @type {ReturnType<typeof judgeSimple>} */
	const out = [];
	/** @type {string[]} */
	let words = [];
	let redirect = "";
	let previous = "";
	const flush = () => {
		if (words.length) out.push(...judgeSimple(words, depth));
		if (
			previous === "|" &&
			words.length &&
			/^(sh|bash|zsh|dash|python3?|node|perl|ruby)$/.test(words[0]?.split("/").at(-1) ?? "")
		)
			out.push(hardly(`piping into ${words[0]} runs code it was sent`, line));
		words = [];
	};
	for (const entry of entries) {
		if (typeof entry === "string") {
			if (redirect) {
				if (/^[<]/.test(redirect) || entry === "/dev/null" || (/&$/.test(redirect) && /^\d+$/.test(entry)))
					redirect = "";
				else {
					out.push(hardly(`\`${redirect} ${entry}\` writes over or into a file`, line));
					redirect = "";
				}
				continue;
			}
			// `2>&1`: shell-quote reads the fd as a word.
			words.push(entry);
			continue;
		}
		if ("comment" in entry) break;
		if (entry.op === "glob") {
			words.push(entry.pattern ?? "*");
			continue;
		}
		if (/^(>|>>|<|&>|&>>|>&|<<<|<<|<<-|<&|>\|)$/.test(entry.op)) {
			if (/^\d$/.test(words.at(-1) ?? "") && entry.op.startsWith(">")) words.pop();
			redirect = entry.op;
			continue;
		}
		flush();
		previous = entry.op;
	}
	flush();
	if (redirect && !/^</.test(redirect)) out.push(hardly(`a redirection \`${redirect}\` with no file`, line));
	return out;
}

// ---------------------------------------------------------------- finding commands in a question

/** Programs whose name alone, followed by an argument, starts a command line in prose. */
const COMMAND_WORDS = new Set([
	"git",
	"rm",
	"rmdir",
	"mv",
	"cp",
	"chmod",
	"chown",
	"chgrp",
	"curl",
	"wget",
	"npm",
	"npx",
	"pnpm",
	"yarn",
	"pip",
	"pip3",
	"python",
	"python3",
	"node",
	"cargo",
	"docker",
	"kubectl",
	"terraform",
	"helm",
	"sudo",
	"ssh",
	"scp",
	"rsync",
	"dd",
	"shred",
	"truncate",
	"pkill",
	"killall",
	"sed",
	"awk",
	"perl",
	"sh",
	"bash",
	"zsh",
	"eval",
	"xargs",
	"ls",
	"mkdir",
	"prettier",
	"eslint",
	"biome",
	"black",
	"ruff",
	"gofmt",
	"tsc",
	"vitest",
	"jest",
	"pytest",
	"gh",
	"apt",
	"apt-get",
	"brew",
	"systemctl",
	"crontab",
	"mkfs",
	"ln",
	"psql",
	"mysql",
	"aws",
	"gcloud",
	"find",
	"kill",
	"make",
	"unlink",
	"tee",
]);
/** A word that names a program the judge knows. @param {string} word */
const isProgram = (word) =>
	[
		COMMAND_WORDS,
		READ_PROGRAMS,
		TEST_PROGRAMS,
		FORMAT_PROGRAMS,
		LINT_PROGRAMS,
		DELETERS,
		NETWORK,
		PROCESS,
		PERMISSIONS,
		INTERPRETERS,
		PACKAGE_MANAGERS,
		PUBLISHERS,
	].some((set) => set.has(word.split("/").at(-1) ?? "")) || word.includes("/");

/** Words after a program name that say it is prose, not a command ("npm or pnpm?", "git for this?"). */
const PROSE_AFTER = new Set(
	"or and vs versus is are was for with to in on of as instead over than the a an that this it its which who be has have will would should could can here there now".split(
		" ",
	),
);
/** English words that are also programs: a command only with a flag or a path after them. */
const ENGLISH_PROGRAMS = new Set(["find", "kill", "make", "ls", "mkdir", "tee", "link", "unlink"]);

/**
 * The command lines inside a question: code spans and blocks, `$ ` lines, and command lines in the words.
 * @param {string} text
 * @returns {{ commands: string[], prose: string }}
 */
export function commandsIn(text) {
	/** @type {string[]} */
	const commands = [];
	let prose = text.replace(/```[^\n]*\n([\s\S]*?)```/g, (_m, body) => {
		for (const line of String(body).split("\n")) if (line.trim()) commands.push(line.replace(/^\s*\$\s+/, ""));
		return " ";
	});
	prose = prose.replace(/`([^`]+)`/g, (_m, body) => {
		const span = String(body).trim();
		// `parseConfig`, `utils`: a name in a code span, not a command.
		if (!/\s/.test(span) && !isProgram(span)) return " that name ";
		commands.push(span);
		return " that command ";
	});
	prose = prose
		.split("\n")
		.map((line) => {
			const dollar = /^\s*\$\s+(.+)$/.exec(line);
			if (!dollar) return line;
			commands.push(dollar[1] ?? "");
			return "";
		})
		.join("\n");
	// A command line in the words: a program's name followed by an argument, up to the end of the sentence.
	const sentences = prose.split(/(?<=[?!])\s+|\n+|(?<=\.)\s+(?=[A-Z])/);
	const kept = [];
	for (const sentence of sentences) {
		const words = sentence.split(/\s+/);
		const start = words.findIndex((word, k) => {
			const name = word.replace(/^[("'“]+/, "");
			if (!COMMAND_WORDS.has(name)) return false;
			const next = words[k + 1]?.replace(/[?.!,;:]+$/, "");
			if (!next || PROSE_AFTER.has(next.toLowerCase())) return false;
			if (ENGLISH_PROGRAMS.has(name)) return /^[-.~/*]|[/*]/.test(next);
			return true;
		});
		if (start < 0) {
			kept.push(sentence);
			continue;
		}
		kept.push(words.slice(0, start).join(" "));
		// Up to a clause that is prose again (", then ...", " to start fresh" stays: extra words only make it stricter).
		const line = words
			.slice(start)
			.join(" ")
			.replace(/[?!]+["')”]*$|\.$/, "")
			.replace(/^[("'“]+/, "");
		commands.push(line);
	}
	return { commands, prose: kept.join(" ") };
}

// ---------------------------------------------------------------- prose

/** What a safe question may propose to do, by verb (the first word of what it proposes). */
const SAFE_VERBS = /** @type {Record<string, SafeAction>} */ ({});
for (const verb of [
	..."continue proceed go keep carry resume start begin finish stay use pick choose prefer name call rename title label".split(
		" ",
	),
	..."add write implement create make fix handle support include document describe explain comment refactor extract".split(
		" ",
	),
	..."split tidy simplify improve optimize optimise type annotate cover test try wire hook mock stub return throw log".split(
		" ",
	),
	..."print show report summarize summarise list check look inspect read review open compare investigate debug ask".split(
		" ",
	),
	..."wait leave skip follow adopt switch change update adjust tweak bump set configure enable disable put place apply".split(
		" ",
	),
	..."sort reorder group inline validate parse translate convert port model define declare expose export import note".split(
		" ",
	),
	..."mention clarify answer respond reply extend expand prefix suffix target aim".split(" "),
])
	SAFE_VERBS[verb] = "continue";
for (const verb of "run rerun execute".split(" ")) SAFE_VERBS[verb] = "test-run";
for (const verb of "format reformat prettify indent".split(" ")) SAFE_VERBS[verb] = "format";
for (const verb of "lint typecheck type-check".split(" ")) SAFE_VERBS[verb] = "lint";
for (const verb of "build compile bundle".split(" ")) SAFE_VERBS[verb] = "build";

/** The frame before the verb: "should I", "do you want me to", "OK to"... */
const FRAME =
	/^(?:(?:so|then|and|or|also|ok|okay|alright|great|next|now|first|finally|yes|no|hi|hey|please|maybe|perhaps|quick question|one more thing|question)[,:!.]?\s+)*(?:(?:should|shall|can|could|may|might|must|would|will)\s+(?:i|we)\s+(?:(?:just|also|now|first|then|still|go\s+ahead\s+and|maybe|rather|instead)\s+)*|do\s+you\s+want\s+(?:me|us)\s+to\s+|(?:would|do)\s+you\s+(?:like|prefer)\s+(?:me|us)\s+to\s+|want\s+me\s+to\s+|is\s+it\s+(?:ok|okay|fine|alright|safe)\s+(?:if\s+i\s+|to\s+)|(?:ok|okay|fine|alright)\s+(?:if\s+i\s+|to\s+|for\s+me\s+to\s+)|mind\s+if\s+i\s+|i\s+(?:will|'ll|am\s+going\s+to|'m\s+going\s+to|plan\s+to|want\s+to|would\s+like\s+to|'d\s+like\s+to|can|could|suggest\s+we|propose\s+to|think\s+i\s+should)\s+|let\s+me\s+|let's\s+|lets\s+|how\s+about\s+(?:i\s+|we\s+)?|what\s+about\s+|any\s+objection\s+to\s+|go\s+ahead\s+and\s+|time\s+to\s+|ready\s+to\s+|proceed\s+(?:to|with)\s+|)/i;

/** A clause's first word after its frame, or undefined when the clause proposes nothing (a which/what question). @param {string} clause */
function proposedVerb(clause) {
	const trimmed = clause.trim().replace(/^[\s"'“(-]+/, "");
	if (!trimmed) return undefined;
	const framed = FRAME.exec(trimmed);
	const frameText = framed?.[0] ?? "";
	const rest = trimmed.slice(frameText.length).replace(/^to\s+/i, "");
	const word = /^[A-Za-z][A-Za-z'-]*/.exec(rest)?.[0]?.toLowerCase();
	if (!word) return undefined;
	// "proceed with the plan", "what about the tests": the frame was the proposal.
	if (frameText && /^(the|a|an|this|that|these|those|my|our|your|its|it|them)$/.test(word)) return "";
	// A question about something, not a proposal to do it: "which library", "what should it be called".
	if (
		!frameText &&
		/^(which|what|whats|what's|how|where|when|who|why|whether|is|are|was|were|does|do|did|has|have|had|any|the|a|an|this|that|these|those|it|its|my|your|our|their|there|here|i|we|you|option|either|both|neither|prefer|tabs|spaces|naming|name|should|shall|can|could|would|will|may|ok|okay|yes|no|sure|done|all|good|thanks|thank)$/.test(
			word,
		)
	) {
		if (word === "do" && /^do\s+away\b/i.test(rest)) return "do";
		// "which files should I delete": a frame later in the clause proposes its verb.
		const inner =
			/\b(?:should|shall|can|could|may|do|must)\s+(?:i|we)\s+(?:(?:just|also|now|first|then)\s+)?([a-z][a-z'-]*)/i.exec(
				rest,
			);
		return inner ? inner[1]?.toLowerCase() : "";
	}
	return word.replace(/ing$/, "").replace(/'s$/, "");
}

/**
 * Clauses: sentences, then what "and", "then", "," or "or" join (each proposal is judged on its own), with
 * the word that joined them: after "or" a clause is an alternative named ("zod or typebox for it") unless
 * it reads as a verb with its object ("keep it or delete it").
 * @param {string} prose
 * @returns {Array<{ text: string, joiner: string }>}
 */
function clausesOf(prose) {
	/** @type {Array<{ text: string, joiner: string }>} */
	const out = [];
	for (const sentence of prose.split(/[.!?;]+(?=\s|$)|\n+|:\s+|\s+[-–—]+\s+/)) {
		// "tidy up by throwing away...": the means is a proposal of its own.
		const parts = sentence.split(
			/(,\s*(?:and|then|or|so)?\s*|\s+(?:and|then|so|or|afterwards|after\s+that|before|plus)\s+|\s+(?:by|via|through)\s+(?=\w+ing\b))/i,
		);
		let joiner = "";
		parts.forEach((part, index) => {
			if (index % 2 === 1) {
				joiner = part.trim().toLowerCase().replace(/^,\s*/, "") || ",";
				return;
			}
			const text = part.trim();
			if (!text) return;
			if (index > 0 && !/\s/.test(text)) return;
			out.push({ text, joiner: index > 0 ? joiner : "" });
		});
	}
	return out;
}

/** A verb of the safe set, also in its -ed, -s and -ing forms. @param {string} verb */
function safeVerb(verb) {
	if (SAFE_VERBS[verb]) return SAFE_VERBS[verb];
	for (const stem of [verb.replace(/ed$/, ""), verb.replace(/e?d$/, ""), verb.replace(/s$/, ""), `${verb}e`])
		if (SAFE_VERBS[stem]) return SAFE_VERBS[stem];
	return undefined;
}

/** Words that start a clause naming something rather than proposing to do it. */
const NOT_PROPOSALS =
	/^(?:in|on|at|to|for|with|from|into|next|under|over|inside|as|by|of|about|via|the|a|an|this|that|these|those|its|my|our|your|their|whole|entire|both|either|neither|each|every|some|any|no|not|only|just|also|too|maybe|probably|instead|rather|otherwise|plural|singular|double|single|raw|plain|two|three|one|more|less|fewer|other|another|same|different|yes|no|ok|okay|sure|please|now|later|first|then|here|there)$/i;

/** Combinations of a verb and a particle that still mean the safe verb. */
const SAFE_PHRASALS =
	/^(?:carry on|move on|go on|keep on|find out|figure out|point out|print out|try out|work out|write down|note down|narrow down|break down|fall back|report back|come back|get back|look over|go over|hand over|set up|look up|wrap up|sort out|lay out|fill out|check out the docs)$/i;

/** Objects that make a proposal the person's: what is not the task's own work. */
const NOT_THE_TASKS =
	/(\b(production|prod|live|main\s+branch|master\s+branch|remote|upstream|origin|registry|server|cluster|bucket|secrets?|passwords?|credentials?|tokens?|api[\s_-]?keys?|ssh|certificates?|billing|payment|card|subscription|(?:paid|pro|billing|pricing|team)\s+plan|tier|accounts?|permissions?|\w*-?(?:writable|readable|executable)|owner|global(?:ly)?|system[- ]wide|home\s+director\w*|shell\s+profile|dotfiles|hosts\s+file|cron(?:\s+job)?|crontab|other\s+repo\w*|sibling\s+repo\w*|another\s+repo\w*|other\s+project|outside|everything|every\s+file|all\s+(?:the\s+)?(?:files|commits|history|data|changes)|history|commits?|migrations?\s+folder|backups?|uploads?|node_modules|\.git|hooks?|dns|domain|prices?|invoices?)\b|\.env\b|~\/|\/etc\/|\/usr\/|\/var\/|\.\.\/)/i;

/**
 * Prose: every clause's proposed verb must be in the safe set (what a question merely asks about
 * proposes nothing); a proposal that names something not the task's (production, history, secrets...)
 * is the person's too.
 * @param {string} prose
 * @returns {{ action: SafeAction | "unknown", why: string }}
 */
function judgeProse(prose) {
	/** @type {SafeAction[]} */
	const found = [];
	for (const { text: clause, joiner } of clausesOf(prose)) {
		const firstWord = /^[^\s]+/.exec(clause)?.[0] ?? "";
		// A name (quoted, camelCase, a path, a version) or a preposition starts no proposal.
		if (/^["'“]|.[A-Z]|[\d_./@]/.test(firstWord)) continue;
		if (joiner && NOT_PROPOSALS.test(firstWord)) continue;
		if (
			joiner === "or" &&
			!/^\S+\s+(?:the|a|an|it|them|this|that|these|those|all|everything|every|my|our|its|away|out|off|up|down|over|back)\b/i.test(
				clause,
			)
		)
			continue;
		const verb = proposedVerb(clause);
		if (verb === undefined || verb === "") continue;
		if (verb === "move" && /\bmove\s+on\b/i.test(clause)) continue;
		const action = safeVerb(verb);
		// A verb with a particle ("start over", "throw away", "do away with") is another verb.
		const particle = new RegExp(
			`\\b(${verb}\\w*)\\s+(?:\\S+\\s+)?(over|away|off|down|out|back|afresh|fresh|from\\s+scratch)\\b`,
			"i",
		).exec(clause);
		if (particle && !SAFE_PHRASALS.test(`${verb} ${particle[2]}`))
			return {
				action: "unknown",
				why: `it proposes to ${verb} ${particle[2]} something, which is not in the safe set`,
			};
		if (!action) return { action: "unknown", why: `it proposes to ${verb} something, which is not in the safe set` };
		if (/\bover\s+(?:the\s+)?(?:existing|current|old|original|\S+\.\w+\b)/i.test(clause))
			return { action: "unknown", why: `it proposes to ${verb} over an existing file` };
		const object = NOT_THE_TASKS.exec(clause)?.[0];
		if (object)
			return { action: "unknown", why: `it proposes to ${verb} ${object.trim()}, which is not the task's own work` };
		found.push(action);
	}
	if (/\b(new|a\s+new|fresh)\s+(file|module|folder|directory|test\s+file|component|page|script)\b/i.test(prose))
		return { action: "create-file", why: "it creates a new file of the task" };
	const named = found.find((action) => action !== "continue");
	if (named === "test-run" && /\b(formatter|prettier)\b/i.test(prose))
		return { action: "format", why: "it proposes format" };
	if (named === "test-run" && /\b(linter|type\s*checker)\b/i.test(prose))
		return { action: "lint", why: "it proposes lint" };
	if (
		named === "test-run" &&
		!/\b(tests?|suite|specs?|checks?|ci|benchmarks?|bench|typecheck|type\s*check|build|that\s+command)\b/i.test(prose)
	)
		return { action: "unknown", why: "it proposes to run something that is not the tests" };
	return { action: named ?? "continue", why: named ? `it proposes ${named}` : "it proposes nothing beyond the task" };
}

// ---------------------------------------------------------------- the verdict

/**
 * What a question (its words and options) proposes, as one action class.
 * @param {{ question: string, options?: readonly string[] }} ask
 * @returns {ActionVerdict}
 */
export function questionAction(ask) {
	// An option is a proposal when it reads as one ("delete the data"); a name ("sqlite", "only one",
	// "date-fns v3") proposes nothing.
	const options = (ask.options ?? []).filter((option) => {
		const words = option.trim().split(/\s+/);
		if (/[`$|;&]/.test(option)) return true;
		if (words.length < 2) return false;
		const first = words[0] ?? "";
		return !NOT_VERBS.has(first.toLowerCase().replace(/[,:]$/, "")) && !/[-.\d/@_]|.[A-Z]/.test(first);
	});
	const { commands, prose } = commandsIn([ask.question, ...options].join("\n"));
	return verdictOf(commands, prose);
}

/** First words of an option that names a choice rather than proposing to do something. */
const NOT_VERBS = new Set(
	"only just both neither none one two three four yes no option plain simple small big large new old existing current default custom separate single multiple inline tabs spaces camelcase a an the my your our this that these those all some no every first second last latest stable strict loose flat nested sync async".split(
		" ",
	),
);

/**
 * A shell command as the worker's bash tool runs it.
 * @param {string} command
 * @returns {ActionVerdict}
 */
export function commandAction(command) {
	return verdictOf([command], "");
}

/** @param {string[]} commands @param {string} prose @returns {ActionVerdict} */
function verdictOf(commands, prose) {
	const judged = commands.flatMap((line) => judgeCommandLine(line));
	const texts = judged.map((verdict) => verdict.command);
	const hard = judged.find((verdict) => verdict.hard);
	if (hard)
		return {
			action: "unknown",
			why: `\`${clip(hard.command)}\`: ${hard.why}`,
			hard: true,
			commands: texts,
			unknown: [hard.command],
		};
	const unknown = judged.filter((verdict) => !verdict.action);
	const words = prose.trim() ? judgeProse(prose) : { action: /** @type {const} */ ("continue"), why: "" };
	if (unknown.length)
		return {
			action: "unknown",
			why: `\`${clip(unknown[0]?.command ?? "")}\`: ${unknown[0]?.why}`,
			hard: words.action === "unknown",
			commands: texts,
			unknown: unknown.map((verdict) => verdict.command),
		};
	if (words.action === "unknown")
		return { action: "unknown", why: words.why, hard: true, commands: texts, unknown: [] };
	const named =
		judged.map((verdict) => verdict.action).find((action) => action && action !== "read") ?? judged[0]?.action;
	const action = named ?? words.action;
	return {
		action,
		why: judged.length ? (judged[0]?.why ?? "") : words.why,
		hard: false,
		commands: texts,
		unknown: [],
	};
}

/** @param {string} text */
const clip = (text) => (text.length > 80 ? `${text.slice(0, 79)}…` : text);
