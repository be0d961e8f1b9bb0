/**
 * Default-mode resolution and the user config file. Order: PONYTAIL_DEFAULT_MODE, the trusted
 * project's config, the XDG user config, then `full`. Unreadable files become warnings, never throws.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../../runner/store/fs-util.mjs";
import { FALLBACK_DEFAULT, type PonytailMode, parseMode } from "./modes.ts";

export interface PonytailSettings {
	defaultMode: PonytailMode;
	/** Where defaultMode came from: "env PONYTAIL_DEFAULT_MODE", a file path, or "built-in". */
	source: string;
	statusBar: boolean;
	quietStartup: boolean;
	condensed: boolean;
	warnings: string[];
}

export interface ConfigInputs {
	env: NodeJS.ProcessEnv;
	/** Project config path, or undefined when the project is not trusted. */
	projectFile?: string;
	userFile: string;
}

export function userConfigFile(env: NodeJS.ProcessEnv): string {
	const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
	return join(base, "ponytail", "config.json");
}

type ReadResult =
	| { kind: "missing" }
	| { kind: "ok"; data: Record<string, unknown> }
	| { kind: "broken"; warning: string };

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** ponytail's config.json: missing, its object, or why it is broken (a warning to show; the store's lenient read says nothing). */
function readConfigFile(file: string): ReadResult {
	let text: string;
	try {
		text = readFileSync(file, "utf8");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
		return { kind: "broken", warning: `ponytail: cannot read ${file}: ${messageOf(error)}; ignoring it` };
	}
	try {
		const data: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
		if (data && typeof data === "object" && !Array.isArray(data))
			return { kind: "ok", data: data as Record<string, unknown> };
		return { kind: "broken", warning: `ponytail: ${file} is not a JSON object; ignoring it` };
	} catch (error) {
		return { kind: "broken", warning: `ponytail: ${file} is not valid JSON (${messageOf(error)}); ignoring it` };
	}
}

function flag(value: string | undefined): boolean | undefined {
	if (value === undefined || value === "") return undefined;
	return !["0", "false", "off", "no"].includes(value.trim().toLowerCase());
}

export function resolveSettings(inputs: ConfigInputs): PonytailSettings {
	const warnings: string[] = [];
	const layers: { source: string; data: Record<string, unknown> }[] = [];
	for (const file of [inputs.projectFile, inputs.userFile]) {
		if (!file) continue;
		const result = readConfigFile(file);
		if (result.kind === "ok") layers.push({ source: file, data: result.data });
		else if (result.kind === "broken") warnings.push(result.warning);
	}

	let defaultMode: PonytailMode = FALLBACK_DEFAULT;
	let source = "built-in";
	const envMode = inputs.env.PONYTAIL_DEFAULT_MODE;
	const fromEnv = parseMode(envMode);
	if (envMode && !fromEnv)
		warnings.push(`ponytail: PONYTAIL_DEFAULT_MODE="${envMode}" is not a mode (off, lite, full, ultra); ignoring it`);
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
			warnings.push(
				`ponytail: ${layer.source}: defaultMode ${JSON.stringify(value)} is not a mode (off, lite, full, ultra); ignoring it`,
			);
		}
	}

	const firstBool = (key: string): boolean | undefined => {
		for (const layer of layers) if (typeof layer.data[key] === "boolean") return layer.data[key] as boolean;
		return undefined;
	};
	const condensed = flag(inputs.env.PONYTAIL_CONDENSED) ?? false;
	const statusBar = !condensed && (flag(inputs.env.PONYTAIL_STATUS) ?? firstBool("statusBar") ?? true);
	const quietStartup = condensed || (flag(inputs.env.PONYTAIL_QUIET) ?? firstBool("quietStartup") ?? false);
	return { defaultMode, source, statusBar, quietStartup, condensed, warnings };
}

/** Sets defaultMode in the user config, keeping every other key; refuses to overwrite a broken file. */
export function writeDefaultMode(file: string, mode: PonytailMode): void {
	const current = readConfigFile(file);
	if (current.kind === "broken")
		throw new Error(`${current.warning.replace(/; ignoring it$/, "")}; fix or remove it first`);
	const data = current.kind === "ok" ? current.data : {};
	mkdirSync(dirname(file), { recursive: true });
	writeFileAtomic(file, `${JSON.stringify({ ...data, defaultMode: mode }, null, 2)}\n`);
}
