// What a target needs, checked where it runs: node >= 22.19, pi 1.6 through the configured command,
// git, a writable dir with free space, and this package's worker-side files at a given version. Only
// node:* imports and plain syntax: before --install this file is sent over ssh stdin to whatever node
// the host has (`node --input-type=module -`), so a too-old node still gets its answer.
import { execFileSync } from "node:child_process";
// A namespace import: a node too old for statfsSync must still load this file and report itself.
import * as fs from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const MIN_NODE = [22, 19];
export const PI_SERIES = "1.6";
export const MIN_FREE_BYTES = 1024 * 1024 * 1024;

/** @param {string} version "v22.19.0" or "22.19.0" */
export function nodeVersionOk(version) {
	const [major, minor] = version.replace(/^v/, "").split(".").map(Number);
	if (major === undefined || minor === undefined || Number.isNaN(major) || Number.isNaN(minor)) return false;
	const [needMajor = 0, needMinor = 0] = MIN_NODE;
	return major > needMajor || (major === needMajor && minor >= needMinor);
}

/** @param {string} version */
export function piVersionOk(version) {
	return version === PI_SERIES || version.startsWith(`${PI_SERIES}.`);
}

/** @param {string} command @param {string[]} args */
function firstLine(command, args) {
	const out = execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 30000 });
	return out.trim().split("\n").pop()?.trim() ?? "";
}

/** @param {unknown} error */
function why(error) {
	const e = /** @type {{ code?: string, stderr?: unknown, message?: string }} */ (error);
	if (e.code === "ENOENT") return "not found on PATH";
	const stderr = String(e.stderr ?? "")
		.trim()
		.split("\n")
		.pop();
	return stderr || e.message || String(error);
}

/** A failed command's first line that is not a warning (text-rules.mjs firstErrorLine: this file imports nothing of ours). @param {string} text */
function firstError(text) {
	let warning = false;
	for (const line of text.split("\n")) {
		if (!line.trim()) continue;
		if (/^\s/.test(line) && warning) continue;
		warning = /^(warning\b|\(node:\d+\)|\(use `node --trace)/i.test(line.trim());
		if (!warning) return line.trim().slice(0, 300);
	}
	return text.trim().split("\n")[0] ?? "";
}

/**
 * pi itself says which model a run would use: an extension that answers the prompt with pi's own choice
 * (ctx.model: --model, else settings.json's default, else the first model with a key) and whether it
 * has a key, then ends the turn before any request. Its own file: `pi -e` takes files only.
 */
const MODEL_PROBE = `import { writeSync } from "node:fs";
export default function (pi) {
	pi.on("input", async (_event, ctx) => {
		const model = ctx.model;
		let ready = false;
		if (model) ready = ctx.modelRegistry.hasConfiguredAuth(model) || (await ctx.modelRegistry.getProviderAuth(model.provider).catch(() => undefined)) !== undefined;
		const known = model && model.provider !== "unknown" ? model.provider + "/" + model.id : null;
		// fd 1 itself: print mode points process.stdout at stderr to keep its own output clean.
		writeSync(1, JSON.stringify({ type: "agent_board_model", model: known, ready }) + "\\n");
		return { action: "handled" };
	});
}
`;

/**
 * The model a run would use on this host, asked of its pi as a run starts it (the host's own
 * configuration, plus the target's --env values), with a private TMPDIR: the run's, where jiti and
 * node keep their caches (a shared /tmp/jiti may belong to another user).
 * @param {string[]} piCommand @param {Record<string, string>} env @param {string} tmp
 * @returns {{ ok: boolean, model?: string, ready?: boolean, error?: string }}
 */
export function checkModel(piCommand, env, tmp) {
	let probeDir;
	try {
		fs.mkdirSync(tmp, { recursive: true, mode: 0o700 });
		probeDir = fs.mkdtempSync(join(tmp, "model-probe-"));
	} catch {
		probeDir = fs.mkdtempSync(join(tmpdir(), "pab-model-probe-"));
		tmp = tmpdir();
	}
	const probe = join(probeDir, "model-probe.mjs");
	try {
		fs.writeFileSync(probe, MODEL_PROBE, { mode: 0o600 });
		const args = [
			...piCommand.slice(1),
			"--mode",
			"json",
			"-p",
			"--no-session",
			"-e",
			probe,
			"--",
			"agent-board model check",
		];
		const out = execFileSync(piCommand[0] ?? "pi", args, {
			encoding: "utf8",
			stdio: ["ignore", "pipe", "pipe"],
			timeout: 60000,
			cwd: probeDir,
			env: { ...process.env, ...env, TMPDIR: tmp },
		});
		const line = out.split("\n").find((l) => l.startsWith('{"type":"agent_board_model"'));
		if (!line) return { ok: false, error: "pi did not answer the model check" };
		const found = JSON.parse(line);
		const model = typeof found.model === "string" ? found.model : undefined;
		return { ok: !!model && found.ready === true, ...(model ? { model } : {}), ready: found.ready === true };
	} catch (error) {
		const e = /** @type {{ code?: string, stderr?: unknown, message?: string }} */ (error);
		return {
			ok: false,
			error:
				e.code === "ENOENT"
					? "pi not found on PATH"
					: firstError(String(e.stderr ?? "")) || e.message || String(error),
		};
	} finally {
		fs.rmSync(probeDir, { recursive: true, force: true });
	}
}

/**
 * @param {string} dir the target's --dir (relative to the home directory when not absolute)
 * @param {{ pi?: string[], pkgVersion?: string, minFreeBytes?: number, env?: Record<string, string> }} [config]
 *   `env`: the target's --env values (from the board's environment), as a run gets them
 */
export function checkHost(dir, config = {}) {
	const path = resolve(homedir(), dir);
	const node = { version: process.version, ok: nodeVersionOk(process.version), need: `>= ${MIN_NODE.join(".")}` };
	const piCommand = config.pi?.length ? config.pi : ["pi"];
	/** @type {{ command: string, ok: boolean, version?: string, error?: string, need: string }} */
	const pi = { command: piCommand.join(" "), ok: false, need: `${PI_SERIES}.x` };
	try {
		pi.version = firstLine(piCommand[0] ?? "pi", [...piCommand.slice(1), "--version"]);
		pi.ok = piVersionOk(pi.version);
	} catch (error) {
		pi.error = why(error);
	}
	/** @type {{ ok: boolean, version?: string, error?: string }} */
	const git = { ok: false };
	try {
		git.version = firstLine("git", ["--version"]).replace(/^git version /, "");
		git.ok = true;
	} catch (error) {
		git.error = why(error);
	}
	/** @type {{ path: string, ok: boolean, error?: string }} */
	const dirState = { path, ok: false };
	try {
		fs.mkdirSync(path, { recursive: true, mode: 0o700 });
		fs.accessSync(path, fs.constants.W_OK);
		const probe = join(path, `.probe-${process.pid}`);
		fs.writeFileSync(probe, "");
		fs.unlinkSync(probe);
		dirState.ok = true;
	} catch (error) {
		dirState.error = why(error);
	}
	/** @type {{ freeBytes?: number, ok: boolean, need: number, error?: string }} */
	const disk = { ok: false, need: config.minFreeBytes ?? MIN_FREE_BYTES };
	try {
		if (typeof fs.statfsSync !== "function") throw new Error(`node ${process.version} cannot read free space`);
		const stat = fs.statfsSync(fs.existsSync(path) ? path : homedir());
		disk.freeBytes = Number(stat.bavail) * Number(stat.bsize);
		disk.ok = disk.freeBytes >= disk.need;
	} catch (error) {
		disk.error = why(error);
	}
	const pkg = {
		version: config.pkgVersion ?? "",
		present: !!config.pkgVersion && fs.existsSync(join(path, "pkg", config.pkgVersion, ".complete")),
	};
	// Only a pi of the right series is asked: another would fail every run anyway, for its own reason.
	const model = pi.ok ? checkModel(piCommand, config.env ?? {}, join(path, "tmp")) : undefined;
	return {
		ok: node.ok && pi.ok && git.ok && dirState.ok && disk.ok && pkg.present && (model?.ok ?? false),
		node,
		pi,
		git,
		dir: dirState,
		disk,
		pkg,
		...(model ? { model } : {}),
	};
}

/** One line per requirement for `targets check`. @typedef {import("../../src/board/engine/types.ts").CheckItem} CheckItem */

/** @param {ReturnType<typeof checkModel>} model @param {string} where @returns {CheckItem} */
function modelItem(model, where) {
	if (model.ok) return { name: "model", ok: true, detail: `runs use ${model.model} (the host's pi configuration)` };
	if (model.error)
		return {
			name: "model",
			ok: false,
			detail: `pi could not say which model a run would use: ${model.error}`,
			fix: `run pi -p hi on ${where} yourself to see what fails`,
		};
	if (!model.model)
		return {
			name: "model",
			ok: false,
			detail: "no model configured on the host",
			fix: `copy your models.json/settings.json (and auth.json) to ~/.pi/agent on ${where}, or set one with --env / a preset`,
		};
	const provider = model.model.split("/")[0] ?? "";
	return {
		name: "model",
		ok: false,
		detail: `runs would use ${model.model}, which has no key on the host`,
		fix: `log in there (pi auth login ${provider}), copy your auth.json, or forward its key with --env <NAME>`,
	};
}

/** @param {number} bytes */
function gib(bytes) {
	return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

/**
 * @param {ReturnType<typeof checkHost>} report
 * @param {{ where: string, target?: string }} options  `where` names the place in the fixes ("dev", "the image x")
 * @returns {CheckItem[]}
 */
export function checkItems(report, options) {
	const { where } = options;
	const target = options.target ?? "<name>";
	const { node, pi, git, dir, disk, pkg, model } = report;
	/** @type {CheckItem[]} */
	const items = [
		node.ok
			? { name: "node", ok: true, detail: `node ${node.version}` }
			: {
					name: "node",
					ok: false,
					detail: `node ${node.version} is too old (needs ${node.need})`,
					fix: `install node >= ${MIN_NODE.join(".")} on ${where} where a non-interactive shell finds it first`,
				},
		pi.ok
			? { name: "pi", ok: true, detail: `pi ${pi.version} (${pi.command})` }
			: {
					name: "pi",
					ok: false,
					detail: pi.error ? `${pi.command}: ${pi.error}` : `${pi.command} is pi ${pi.version} (needs ${pi.need})`,
					fix: `install pi ${PI_SERIES} on ${where} (npm install -g @earendil-works/pi-coding-agent@${PI_SERIES}), or name it with --pi <command>`,
				},
		...(model ? [modelItem(model, where)] : []),
		git.ok
			? { name: "git", ok: true, detail: `git ${git.version}` }
			: { name: "git", ok: false, detail: `git: ${git.error}`, fix: `install git on ${where}` },
		dir.ok
			? { name: "dir", ok: true, detail: `${dir.path} is writable` }
			: {
					name: "dir",
					ok: false,
					detail: `${dir.path}: ${dir.error}`,
					fix: `make ${dir.path} writable by the login user, or choose another with --dir`,
				},
		disk.ok
			? { name: "disk", ok: true, detail: `${gib(disk.freeBytes ?? 0)} free` }
			: {
					name: "disk",
					ok: false,
					detail: disk.error
						? `free space unknown: ${disk.error}`
						: `${gib(disk.freeBytes ?? 0)} free in ${dir.path} (needs ${gib(disk.need)})`,
					fix: `free space on ${where}, or choose another --dir`,
				},
	];
	if (pkg.version) {
		items.push(
			pkg.present
				? { name: "board files", ok: true, detail: `version ${pkg.version} installed` }
				: {
						name: "board files",
						ok: false,
						detail: `version ${pkg.version} is not installed in ${dir.path}/pkg`,
						fix: `/agent-board targets check ${target} --install (copies them over ssh)`,
					},
		);
	}
	return items;
}
