/**
 * The board's targets: list them with their limits and what runs there, add, check (each requirement
 * ok or what is wrong and how to fix it), remove (refused while rows run or wait there), and change a
 * limit (the local one included), which the queue applies at its next pump.
 */
import { spawnSync } from "node:child_process";
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { rmSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { LOCAL_TARGET } from "../../../runner/life/board-config.mjs";
import { check as checkContainer } from "../../../runner/kinds/container/container-transport.mjs";
import type { CheckProgress } from "../../../runner/kinds/container/container-check.mjs";
import { checkOverSsh, FarError } from "../../../runner/link/far-client.mjs";
import { checkItems, type CheckItem } from "../../../runner/far/host-check.mjs";
import { installOverSsh, packageVersion } from "../../../runner/kinds/ssh/pkg-install.mjs";
import { controlPathFor, parseSshHost, sshOptions } from "../../../runner/kinds/ssh/ssh-transport.mjs";
import type { EngineContext } from "../engine/engine-context.ts";
import { BoardError } from "../engine/errors.ts";
import type { BoardRow, SshTargetConfig, TargetConfig } from "../engine/types.ts";
import { readBoardConfig, updateBoardConfig, checkNewTargetName } from "./board-config.ts";
import { targetConfigFrom, type TargetInput } from "./target-input.ts";

export type { CheckItem, CheckProgress, TargetInput };

export interface TargetView {
	name: string;
	kind: "local" | TargetConfig["kind"];
	/** One line: where runs go ("this machine", "ssh dev (dir .agent-board)", "podman image x"). */
	where: string;
	max: number;
	running: number;
	queued: number;
	/** Rows there that cannot reach it: the oldest since, and its reason. */
	unreachable?: { since: number; reason: string };
	config?: TargetConfig;
}

export interface TargetCheck {
	target: string;
	ok: boolean;
	items: CheckItem[];
}

export interface TargetsApi {
	list(): Promise<TargetView[]>;
	add(name: string, input: TargetInput): Promise<TargetView>;
	remove(name: string): Promise<void>;
	/** `progress`: what is being checked, and each line as soon as it is known. */
	check(name: string, options?: { install?: boolean; progress?: CheckProgress }): Promise<TargetCheck>;
	/** The concurrency limit of a target, or of this machine ("local"). */
	setLimit(name: string, max: number): Promise<void>;
}

function describe(config: TargetConfig | undefined): string {
	if (!config) return "this machine";
	if (config.kind === "ssh") return `ssh ${config.host} (dir ${config.dir})`;
	return `${config.engine} image ${config.image}${config.network ? ` (network ${config.network})` : ""}`;
}

/** Why ssh could not get in, and what to do about it. */
function reachItem(error: unknown, host: string): CheckItem {
	const kind = error instanceof FarError ? error.kind : "remote";
	const detail = error instanceof Error ? error.message : String(error);
	const fixes: Record<string, string> = {
		unreachable: `check the host name, that sshd runs there and that this machine can reach it (ssh ${host})`,
		auth: `make key login work without a prompt: ssh-copy-id ${host}, or load the key into your ssh agent (the board never types a password)`,
		"host-key-changed": `if ${host} was reinstalled, drop the old key (ssh-keygen -R <host>) and connect once with ssh to accept the new one; otherwise someone may be in between`,
		"host-key-unknown": `connect once with ssh ${host} to check and accept its host key`,
	};
	return { name: "reachable", ok: false, detail, fix: fixes[kind] ?? `run ssh ${host} node -v yourself to see what fails` };
}

/** listLive: the rows that may run or wait (the live summary: O(live rows)); listRows: every row. */
export function targetsApi(ctx: EngineContext, listLive: () => Promise<BoardRow[]>, listRows: () => Promise<BoardRow[]>): TargetsApi {
	const stateDir = (name: string) => join(ctx.storeDir, "targets", name);
	const sshOf = (name: string, config: SshTargetConfig) => ({ host: config.host, ...(config.sshConfig ? { sshConfig: config.sshConfig } : {}), controlPath: controlPathFor(stateDir(name)) });

	function known(name: string): TargetConfig {
		const config = readBoardConfig(ctx.storeDir).targets[name];
		if (!config) throw new BoardError("invalid", `unknown target ${name}`);
		return config;
	}

	async function checkSsh(name: string, config: SshTargetConfig, install: boolean, progress?: CheckProgress): Promise<TargetCheck> {
		const ssh = sshOf(name, config);
		const pkgVersion = packageVersion();
		let report: Awaited<ReturnType<typeof checkOverSsh>>;
		progress?.checking(`ssh ${config.host}, then its node, pi and model, git, dir and disk`);
		try {
			// The --env values go as a run's do (in the program on stdin, never argv): they may hold the model's key.
			const env = Object.fromEntries(config.env.flatMap((key) => (ctx.env[key] === undefined ? [] : [[key, String(ctx.env[key])]])));
			report = await checkOverSsh(ssh, config.dir, { ...(config.pi ? { pi: config.pi } : {}), pkgVersion, env });
		} catch (error) {
			const item = reachItem(error, config.host);
			progress?.item(item);
			return { target: name, ok: false, items: [item] };
		}
		const items: CheckItem[] = [{ name: "reachable", ok: true, detail: `ssh ${config.host} logs in without a prompt` }, ...checkItems(report, { where: config.host, target: name })];
		const installing = install && !report.pkg.present && report.dir.ok;
		for (const item of installing ? items.filter((i) => i.name !== "board files") : items) progress?.item(item);
		if (installing) {
			const at = items.findIndex((item) => item.name === "board files");
			progress?.checking(`the board's files: installing version ${pkgVersion}`);
			try {
				const done = await installOverSsh(ssh, config.dir);
				items[at] = { name: "board files", ok: true, detail: `version ${done.version} ${done.outcome}` };
			} catch (error) {
				items[at] = { name: "board files", ok: false, detail: `install failed: ${error instanceof Error ? error.message : String(error)}`, fix: `free space in ${report.dir.path}, or check that it is writable` };
			}
			const installed = items[at];
			if (installed) progress?.item(installed);
		}
		return { target: name, ok: items.every((item) => item.ok), items };
	}

	return {
		async list() {
			const config = readBoardConfig(ctx.storeDir);
			// Running, queued and unreachable rows are all live: S and `targets` never read the whole store.
			const rows = await listLive();
			const view = (name: string, target: TargetConfig | undefined, max: number): TargetView => {
				const here = rows.filter((row) => (row.target ?? LOCAL_TARGET) === name);
				const unreachable = here.flatMap((row) => (row.unreachable ? [row.unreachable] : [])).sort((a, b) => a.since - b.since)[0];
				return {
					name,
					kind: target?.kind ?? "local",
					where: describe(target),
					max,
					running: here.filter((row) => row.alive).length,
					queued: here.filter((row) => row.state === "queued" && !row.alive).length,
					...(unreachable ? { unreachable } : {}),
					...(target ? { config: target } : {}),
				};
			};
			return [view(LOCAL_TARGET, undefined, config.maxRunning ?? ctx.maxConcurrent), ...Object.entries(config.targets).map(([name, target]) => view(name, target, target.max))];
		},
		async add(name, input) {
			const target = targetConfigFrom(input);
			if (target.kind === "ssh" && target.sshConfig && !isAbsolute(target.sshConfig)) target.sshConfig = resolve(target.sshConfig);
			ctx.init();
			await updateBoardConfig(ctx.storeDir, (config) => {
				config.targets[checkNewTargetName(config, name)] = target;
			});
			return { name, kind: target.kind, where: describe(target), max: target.max, running: 0, queued: 0, config: target };
		},
		async remove(name) {
			const config = known(name);
			const busy = (await listRows()).filter((row) => row.target === name && (row.alive || row.state === "queued" || row.state === "working"));
			if (busy.length > 0) throw new BoardError("busy", `target ${name} has ${busy.length} row(s) running or waiting there (${busy.map((row) => row.id).join(", ")}): stop them first`);
			await updateBoardConfig(ctx.storeDir, (current) => {
				delete current.targets[name];
			});
			// The master connection goes too; the host's dir (mirrors, workspaces, sessions) stays the user's.
			if (config.kind === "ssh") spawnSync("ssh", [...sshOptions(sshOf(name, config), { master: "no" }), "-O", "exit", parseSshHost(config.host).destination], { stdio: "ignore", timeout: 10_000 });
			rmSync(join(stateDir(name), "slots"), { recursive: true, force: true });
		},
		async check(name, options = {}) {
			const config = known(name);
			if (config.kind === "ssh") return checkSsh(name, config, options.install === true, options.progress);
			const items = await checkContainer({ ...config, name }, { storeDir: ctx.storeDir, agentDir: ctx.env.PI_CODING_AGENT_DIR || getAgentDir(), ...(options.progress ? { progress: options.progress } : {}) });
			return { target: name, ok: items.every((item) => item.ok), items };
		},
		async setLimit(name, max) {
			if (!Number.isInteger(max) || max < 1) throw new BoardError("invalid", `a limit must be a whole number >= 1 (got ${JSON.stringify(max)})`);
			ctx.init();
			await updateBoardConfig(ctx.storeDir, (config) => {
				if (name === LOCAL_TARGET) config.maxRunning = max;
				else if (config.targets[name]) config.targets[name].max = max;
				else throw new BoardError("invalid", `unknown target ${name}`);
			});
			// Applied at once to what is queued.
			ctx.pump(true);
		},
	};
}
