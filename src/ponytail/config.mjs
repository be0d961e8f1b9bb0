/**
 * Default-mode resolution and the user config file. Order: PONYTAIL_DEFAULT_MODE, the trusted
 * project's config, the XDG user config, then `full`. Unreadable files become warnings, never throws.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../../runner/store/fs-util.mjs";
import { FALLBACK_DEFAULT, parseMode } from "./modes.mjs";

/** @typedef {import("./modes.mjs").PonytailMode} PonytailMode */
/**
 * `source`: where defaultMode came from: "env PONYTAIL_DEFAULT_MODE", a file path, or "built-in".
 * @typedef {{ defaultMode: PonytailMode, source: string, statusBar: boolean, quietStartup: boolean, condensed: boolean, warnings: string[] }} PonytailSettings
 */
/** `projectFile`: undefined when the project is not trusted. @typedef {{ env: NodeJS.ProcessEnv, projectFile?: string, userFile: string }} ConfigInputs */

/** @param {NodeJS.ProcessEnv} env */
export function userConfigFile(env) {
	const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
	return join(base, "ponytail", "config.json");
}

/** @typedef {{ kind: "missing" } | { kind: "ok", data: Record<string, unknown> } | { kind: "broken", warning: string }} ReadResult */

/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/** @param {string} file @returns {ReadResult} */
export function readJsonObject(file) {
	let text;
	try {
		text = readFileSync(file, "utf8");
	} catch (error) {
		if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT") return { kind: "missing" };
		return { kind: "broken", warning: `ponytail: cannot read ${file}: ${messageOf(error)}; ignoring it` };
	}
	try {
		/** @type {unknown} */
		const data = JSON.parse(text.replace(/^\uFEFF/, ""));
		if (data && typeof data === "object" && !Array.isArray(data)) return { kind: "ok", data: /** @type {Record<string, unknown>} */ (data) };
		return { kind: "broken", warning: `ponytail: ${file} is not a JSON object; ignoring it` };
	} catch (error) {
		return { kind: "broken", warning: `ponytail: ${file} is not valid JSON (${messageOf(error)}); ignoring it` };
	}
}

/** @param {string | undefined} value @returns {boolean | undefined} */
function flag(value) {
	if (value === undefined || value === "") return undefined;
	return !["0", "false", "off", "no"].includes(value.trim().toLowerCase());
}

/** @param {ConfigInputs} inputs @returns {PonytailSettings} */
export function resolveSettings(inputs) {
	/** @type {string[]} */
	const warnings = [];
	/** @type {{ source: string, data: Record<string, unknown> }[]} */
	const layers = [];
	for (const file of [inputs.projectFile, inputs.userFile]) {
		if (!file) continue;
		const result = readJsonObject(file);
		if (result.kind === "ok") layers.push({ source: file, data: result.data });
		else if (result.kind === "broken") warnings.push(result.warning);
	}

	let defaultMode = FALLBACK_DEFAULT;
	let source = "built-in";
	const envMode = inputs.env.PONYTAIL_DEFAULT_MODE;
	const fromEnv = parseMode(envMode);
	if (envMode && !fromEnv) warnings.push(`ponytail: PONYTAIL_DEFAULT_MODE="${envMode}" is not a mode (off, lite, full, ultra); ignoring it`);
	if (fromEnv) {
		defaultMode = fromEnv;
		source = "env PONYTAIL_DEFAULT_MODE";
	} else {
		for (const layer of layers) {
			const value = layer.data.defaultMode;
			if (value === undefined) continue;
			const mode = parseMode(value);
			if (mode) {
				defaultMode = mode;
				source = layer.source;
				break;
			}
			warnings.push(`ponytail: ${layer.source}: defaultMode ${JSON.stringify(value)} is not a mode (off, lite, full, ultra); ignoring it`);
		}
	}

	/** @param {string} key @returns {boolean | undefined} */
	const firstBool = (key) => {
		for (const layer of layers) {
			const value = layer.data[key];
			if (typeof value === "boolean") return value;
		}
		return undefined;
	};
	const condensed = flag(inputs.env.PONYTAIL_CONDENSED) ?? false;
	const statusBar = !condensed && (flag(inputs.env.PONYTAIL_STATUS) ?? firstBool("statusBar") ?? true);
	const quietStartup = condensed || (flag(inputs.env.PONYTAIL_QUIET) ?? firstBool("quietStartup") ?? false);
	return { defaultMode, source, statusBar, quietStartup, condensed, warnings };
}

/**
 * Sets defaultMode in the user config, keeping every other key; refuses to overwrite a broken file.
 * @param {string} file @param {PonytailMode} mode
 */
export function writeDefaultMode(file, mode) {
	const current = readJsonObject(file);
	if (current.kind === "broken") throw new Error(`${current.warning.replace(/; ignoring it$/, "")}; fix or remove it first`);
	const data = current.kind === "ok" ? current.data : {};
	mkdirSync(dirname(file), { recursive: true });
	writeFileAtomic(file, `${JSON.stringify({ ...data, defaultMode: mode }, null, 2)}\n`);
}
