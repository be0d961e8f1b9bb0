// The pi home a container run gets (mounted as its PI_CODING_AGENT_DIR): the user's models.json and
// settings.json and the credentials of the one provider the row uses, nothing else of ~/.pi/agent.
// Other providers' entries leave models.json too (their apiKey or headers may be secrets), and
// settings that point at files of this machine (packages, extensions, ...) are dropped: they do not
// exist inside and would make pi reach for the network.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureDir, parseJsonStrict, writeJsonAtomic } from "../../store/fs-util.mjs";

const HOST_ONLY_SETTINGS = [
	"packages",
	"extensions",
	"skills",
	"prompts",
	"themes",
	"sessionDir",
	"shellPath",
	"npmCommand",
	"selfUpdateCommand",
];

/** @param {string} path @returns {Record<string, unknown> | undefined} */
function readObject(path) {
	if (!existsSync(path)) return undefined;
	let value;
	try {
		value = parseJsonStrict(readFileSync(path, "utf8"), path);
	} catch (error) {
		throw new Error(
			`cannot build the container's pi home: ${error instanceof Error ? error.message : String(error)}`,
		);
	}
	if (!value || typeof value !== "object" || Array.isArray(value))
		throw new Error(`cannot build the container's pi home: ${path} is not a JSON object`);
	return /** @type {Record<string, unknown>} */ (value);
}

/**
 * The provider a row's model uses: "provider/id" names it, else the settings' default provider.
 * @param {string | undefined} model @param {Record<string, unknown> | undefined} settings
 */
export function rowProvider(model, settings) {
	if (model?.includes("/")) return model.slice(0, model.indexOf("/"));
	const fallback = settings?.defaultProvider;
	return typeof fallback === "string" && fallback ? fallback : undefined;
}

/**
 * Writes the pi home into `dest` (0700, files 0600) and returns what it holds.
 * @param {{ agentDir: string, dest: string, model?: string }} options
 * @returns {{ provider: string | undefined, files: string[] }}
 */
export function makePiHome({ agentDir, dest, model }) {
	const settings = readObject(join(agentDir, "settings.json"));
	const provider = rowProvider(model, settings);
	ensureDir(dest);
	/** @type {string[]} */
	const files = [];
	if (settings) {
		const kept = { ...settings };
		for (const key of HOST_ONLY_SETTINGS) delete kept[key];
		writeJsonAtomic(join(dest, "settings.json"), kept);
		files.push("settings.json");
	}
	const models = readObject(join(agentDir, "models.json"));
	if (models) {
		const providers = /** @type {Record<string, unknown>} */ (
			models.providers && typeof models.providers === "object" ? models.providers : {}
		);
		const kept = provider && providers[provider] ? { [provider]: providers[provider] } : {};
		writeJsonAtomic(join(dest, "models.json"), {
			...(models.$schema ? { $schema: models.$schema } : {}),
			providers: kept,
		});
		files.push("models.json");
	}
	const auth = readObject(join(agentDir, "auth.json"));
	if (auth && provider && auth[provider] !== undefined) {
		writeJsonAtomic(join(dest, "auth.json"), { [provider]: auth[provider] });
		files.push("auth.json");
	}
	return { provider, files };
}

/**
 * The provider a row (or the default model) uses and its base URL when models.json names one (a
 * built-in provider's URL is pi's: the caller passes it). `targets check` asks it from inside.
 * @param {{ agentDir: string, model?: string }} options
 * @returns {{ provider: string | undefined, baseUrl: string | undefined }}
 */
export function providerBaseUrl({ agentDir, model }) {
	const provider = rowProvider(model, readObject(join(agentDir, "settings.json")));
	const providers = readObject(join(agentDir, "models.json"))?.providers;
	const entry =
		provider && providers && typeof providers === "object"
			? /** @type {Record<string, unknown>} */ (providers)[provider]
			: undefined;
	const baseUrl =
		entry && typeof entry === "object" ? /** @type {{ baseUrl?: unknown }} */ (entry).baseUrl : undefined;
	return { provider, baseUrl: typeof baseUrl === "string" && baseUrl ? baseUrl : undefined };
}
