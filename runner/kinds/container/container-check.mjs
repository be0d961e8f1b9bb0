// `targets check <name>` for a container target: what the engine, the image and its network say,
// gathered by checkContainerTarget (engine calls, one probe container of the image with the target's
// network, the start cache), turned into one line per requirement by containerCheckItems (pure): ok,
// or what is wrong and how to fix it.
import { containerOneShotArgs, engineGlobalArgs } from "./container-argv.mjs";
import { cacheRoot, ensureStartCache } from "./container-cache.mjs";
import { buildFix, EngineError, engineRun } from "./container-engine.mjs";
import { PACKAGE_ROOT, packageVersion } from "../../far/package-files.mjs";
import { MIN_NODE, nodeVersionOk, PI_SERIES, piVersionOk } from "../../far/host-check.mjs";
import { providerBaseUrl } from "./pi-home.mjs";

/**
 * Why this engine's path (bind mounts of this machine's dirs) refuses a remote engine, whose mounts
 * would name paths on its own machine: the kind sends such a target to its station instead
 * (driver-remote-engine.mjs, remote-engine-check.mjs).
 */
export const ENGINE_HOST_REFUSED =
	"a remote engine (--engine-host) cannot mount this machine's run dirs: its runs go through its station container, not this path";
const ENGINE_HOST_FIX = "check and run it as a target (targets check <name>), which goes through the station";
const PROBE = "/ab/pkg/runner/kinds/container/container-probe.mjs";

/** @typedef {import("../../far/host-check.mjs").CheckItem} CheckItem */
/** @typedef {{ code: string, detail: string, fix?: string, said?: string }} Failure */
/** @typedef {import("../kind.mjs").CheckProgress} CheckProgress */
/**
 * @typedef {object} ProbeReport  what container-probe.mjs prints
 * @property {string} node
 * @property {{ version?: string, error?: string }} pi
 * @property {{ version?: string, error?: string }} bash
 * @property {{ version?: string, error?: string }} git
 * @property {{ reachable: boolean, detail: string }} [network]
 */
/**
 * @typedef {object} ContainerCheckFacts
 * @property {{ version?: string, runtime?: string, error?: Failure }} [engine]
 * @property {{ id?: string, error?: Failure }} [image]
 * @property {{ report?: ProbeReport, error?: Failure }} [probe]
 * @property {{ provider?: string, baseUrl?: string }} [provider]
 * @property {{ ms?: number, prepared?: boolean, error?: string }} [cache]
 */

/** @param {unknown} error @returns {Failure} */
export function asFailure(error) {
	if (error instanceof EngineError)
		return { code: error.code, detail: error.detail, fix: error.fix, said: error.said };
	return { code: "engine-failed", detail: error instanceof Error ? error.message : String(error) };
}

/** @param {Failure} f */
const said = (f) => (f.said ? `${f.detail} (${f.said})` : f.detail);

/** @param {string} url */
function isLoopback(url) {
	try {
		return /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i.test(new URL(url).hostname);
	} catch {
		return false;
	}
}

/**
 * The program an engine or runtime could not find, in its own words ("exec: \"node\": executable file
 * not found in $PATH", "netavark: No such file or directory"), or undefined.
 * @param {string} text
 */
export function missingProgram(text) {
	const found =
		/exec: "([^"]+)": executable file not found/.exec(text) ??
		/"([^"\s]+)": executable file not found/.exec(text) ??
		/\b([\w.-]+): no such file or directory \(os error/i.exec(text);
	return found?.[1]?.split("/").pop();
}

/**
 * One line per requirement. Pure: `facts` is what checkContainerTarget found.
 * @param {{ engine: "docker" | "podman", image: string, engineHost?: string, network?: string }} target
 * @param {ContainerCheckFacts} facts
 * @returns {CheckItem[]}
 */
export function containerCheckItems(target, facts) {
	const { engine, image } = target;
	if (target.engineHost)
		return [
			{
				name: "engine host",
				ok: false,
				detail: `${target.engineHost}: ${ENGINE_HOST_REFUSED}`,
				fix: ENGINE_HOST_FIX,
			},
		];
	/** @type {CheckItem[]} */
	const items = [];
	if (!facts.engine || facts.engine.error) {
		const f = facts.engine?.error ?? { code: "engine-failed", detail: `${engine} was not asked` };
		items.push({
			name: "engine",
			ok: false,
			detail: said(f),
			fix: f.fix ?? `make \`${engine} info\` work for this user`,
		});
		return items;
	}
	items.push({
		name: "engine",
		ok: true,
		detail:
			`${engine} ${facts.engine.version ?? ""}${facts.engine.runtime ? ` (runtime ${facts.engine.runtime})` : ""}`.trim(),
	});
	if (!facts.image || facts.image.error) {
		const f = facts.image?.error ?? { code: "engine-failed", detail: "not checked" };
		items.push({ name: "image", ok: false, detail: said(f), fix: f.fix ?? buildFix(engine, image) });
		return items;
	}
	items.push({
		name: "image",
		ok: true,
		detail: `${image} (${(facts.image.id ?? "").replace(/^sha256:/, "").slice(0, 12)})`,
	});
	const needs = `an image with node >= ${MIN_NODE.join(".")}, pi ${PI_SERIES}, bash and git: ${buildFix(engine, image)}`;
	const report = facts.probe?.report;
	if (!report) {
		const f = facts.probe?.error ?? { code: "engine-failed", detail: "not checked" };
		// A missing program is the image's only when it is node: the engine's own helpers go missing too
		// (iptables, netavark, a runtime: a PATH without /usr/sbin), and then the image is not to blame.
		const missing = missingProgram(`${f.detail} ${f.said ?? ""}`);
		if (missing === "node") items.push({ name: "node", ok: false, detail: `node is not in ${image}`, fix: needs });
		else
			items.push({
				name: "container",
				ok: false,
				detail: `${engine} could not start a container of ${image}: ${said(f)}`,
				fix:
					f.fix ??
					(missing
						? `${engine} runs ${missing} itself and could not find it: put the directory that holds it on PATH (for root, /usr/sbin and /sbin), or install it`
						: `make \`${engine} run --rm ${image} node --version\` work for this user`),
			});
		items.push({
			name: "pi, bash, git",
			ok: false,
			detail: "not checked (the check runs on the image's node)",
			fix: needs,
		});
		return items;
	}
	items.push(
		nodeVersionOk(report.node)
			? { name: "node", ok: true, detail: `node ${report.node}` }
			: {
					name: "node",
					ok: false,
					detail: `node ${report.node} in ${image} is too old (needs >= ${MIN_NODE.join(".")})`,
					fix: needs,
				},
	);
	const pi = report.pi;
	items.push(
		pi.version && piVersionOk(pi.version)
			? { name: "pi", ok: true, detail: `pi ${pi.version}` }
			: {
					name: "pi",
					ok: false,
					detail: pi.error ? `pi: ${pi.error}` : `pi ${pi.version} in ${image} (needs ${PI_SERIES}.x)`,
					fix: needs,
				},
	);
	for (const name of /** @type {const} */ (["bash", "git"])) {
		const tool = report[name];
		items.push(
			tool.version
				? { name, ok: true, detail: `${name} ${tool.version}` }
				: { name, ok: false, detail: `${name}: ${tool.error ?? "missing"}`, fix: needs },
		);
	}
	items.push(networkItem(target, facts.provider, report.network));
	if (facts.cache) {
		const c = facts.cache;
		items.push(
			c.error
				? {
						name: "start cache",
						ok: false,
						detail: `pi with this board's extension did not load in ${image}: ${c.error}`,
						fix: needs,
					}
				: {
						name: "start cache",
						ok: true,
						detail: c.prepared ? `prepared in ${((c.ms ?? 0) / 1000).toFixed(1)} s` : "ready",
					},
		);
	}
	return items;
}

/**
 * @param {{ network?: string }} target
 * @param {ContainerCheckFacts["provider"]} provider @param {ProbeReport["network"]} reached
 * @returns {CheckItem}
 */
function networkItem(target, provider, reached) {
	const mode = target.network ? `--network ${target.network}` : "the engine's default network";
	if (!provider?.baseUrl) {
		const which = provider?.provider
			? `provider "${provider.provider}" has no baseUrl in models.json`
			: "no model provider is configured (settings.json defaultProvider)";
		return { name: "network", ok: true, detail: `not checked: ${which}` };
	}
	const url = provider.baseUrl;
	if (reached?.reachable)
		return { name: "network", ok: true, detail: `${url} answers from ${mode} (${reached.detail})` };
	const detail = `the model provider ${url} cannot be reached from ${mode}${reached ? `: ${reached.detail}` : ""}`;
	if (target.network === "none")
		return {
			name: "network",
			ok: false,
			detail,
			fix: "--network none has no network at all: drop --network (the engine's default) or use --network host",
		};
	if (isLoopback(url) && target.network !== "host")
		return {
			name: "network",
			ok: false,
			detail,
			fix: "the provider listens on this machine's loopback, which a container's own network cannot see: use --network host",
		};
	return {
		name: "network",
		ok: false,
		detail,
		fix: `choose a --network from which ${url} answers (the engine's default, or host), or check the provider's address`,
	};
}

/**
 * Gathers the facts and returns the lines. With `storeDir`, a target whose image is fine gets its
 * start cache prepared too (so the first run starts warm).
 * @param {{ engine: "docker" | "podman", image: string, engineHost?: string, network?: string }} target
 * @param {{ storeDir?: string, agentDir?: string, model?: string, baseUrl?: string, uid?: number, gid?: number, progress?: CheckProgress }} [options]
 *   `baseUrl`: the provider's, when pi knows it and models.json does not (a built-in provider);
 *   `progress`: told what is being checked, and each line as soon as it is known
 * @returns {Promise<{ ok: boolean, items: CheckItem[], facts: ContainerCheckFacts }>}
 */
export async function checkContainerTarget(target, options = {}) {
	/** @type {ContainerCheckFacts} */
	const facts = {};
	let told = 0;
	/** Reports the lines the facts so far settle (`upTo` of them; all when the check is over). @param {number} [upTo] */
	const tell = (upTo) => {
		const items = containerCheckItems(target, facts);
		for (const item of items.slice(told, upTo ?? items.length)) options.progress?.item(item);
		told = Math.max(told, Math.min(upTo ?? items.length, items.length));
		return items;
	};
	const done = () => {
		const items = tell();
		return { ok: items.every((item) => item.ok), items, facts };
	};
	if (target.engineHost) return done();
	const { engine, image } = target;
	const global = engineGlobalArgs(engine, target.engineHost);
	options.progress?.checking(`${engine} itself`);
	try {
		const version = (
			await engineRun(engine, [...global, "version", "--format", "{{.Client.Version}}"], { timeoutMs: 30_000 })
		).stdout.trim();
		// info needs the daemon (docker) or a working runtime (podman): version alone says neither.
		const info = await engineRun(
			engine,
			[...global, "info", "--format", engine === "podman" ? "{{.Host.OCIRuntime.Name}}" : "{{.DefaultRuntime}}"],
			{ timeoutMs: 30_000 },
		);
		facts.engine = { version, runtime: info.stdout.trim() };
	} catch (error) {
		facts.engine = { error: asFailure(error) };
		return done();
	}
	tell(1);
	options.progress?.checking(`the image ${image}`);
	try {
		facts.image = {
			id: (
				await engineRun(engine, [...global, "image", "inspect", "--format", "{{.Id}}", image], {
					image,
					timeoutMs: 30_000,
				})
			).stdout.trim(),
		};
	} catch (error) {
		facts.image = { error: asFailure(error) };
		return done();
	}
	const uid = options.uid ?? process.getuid?.() ?? 0;
	const gid = options.gid ?? process.getgid?.() ?? 0;
	const fromConfig = options.agentDir
		? providerBaseUrl({ agentDir: options.agentDir, model: options.model })
		: { provider: undefined, baseUrl: undefined };
	facts.provider = { provider: fromConfig.provider, baseUrl: options.baseUrl ?? fromConfig.baseUrl };
	const args = containerOneShotArgs(
		{ engine, image, storeDir: options.storeDir ?? "", pkg: PACKAGE_ROOT, uid, gid, network: target.network ?? "" },
		{
			purpose: "check",
			volumes: [],
			command: ["node", PROBE, ...(facts.provider.baseUrl ? [facts.provider.baseUrl] : [])],
		},
	);
	tell(2);
	options.progress?.checking(`a container of ${image}: node, pi, bash, git and the network`);
	try {
		const out = (await engineRun(engine, args, { image, timeoutMs: 120_000 })).stdout;
		facts.probe = { report: JSON.parse(out.trim().split("\n").pop() ?? "") };
	} catch (error) {
		facts.probe = { error: asFailure(error) };
		return done();
	}
	const items = tell();
	if (options.storeDir && items.every((item) => item.ok)) {
		options.progress?.checking("the start cache (pi with this board's extension, once per image and version)");
		try {
			const cache = await ensureStartCache({
				engine,
				image,
				cacheRoot: cacheRoot(options.storeDir),
				storeDir: options.storeDir,
				pkg: PACKAGE_ROOT,
				pkgVersion: packageVersion(),
				uid,
				gid,
			});
			facts.cache = { ms: cache.ms, prepared: cache.prepared };
		} catch (error) {
			facts.cache = { error: asFailure(error).detail };
		}
	}
	return done();
}
