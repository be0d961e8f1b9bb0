/**
 * The board's targets: list them with their limits and what runs there, add, check (each requirement
 * ok or what is wrong and how to fix it), remove (refused while rows run or wait there), and change a
 * limit (the local one included), which the queue applies at its next pump. Kind-agnostic: what differs
 * per kind (its fields, its words, its check, what remove leaves) is asked of its object (runner/kinds/).
 */
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { LOCAL_TARGET } from "../../../runner/life/vocabulary.mjs";
import { kindOf, membersOf, targetFromInput } from "../../../runner/kinds/kinds.mjs";
import { changedTarget, drainedTarget } from "../../../runner/kinds/target-set.mjs";
import { unplaceable } from "../../../runner/life/placement.mjs";
import { readCheck, readHealth, recordCheck } from "../../../runner/life/target-health.mjs";
import { notOver, phase } from "../../../runner/life/phase.mjs";
import { checkNewTargetName, readBoardConfig, updateBoardConfig } from "../../../runner/life/board-config.mjs";
import { BoardError } from "../../../runner/life/reasons.mjs";
import type { EngineContext } from "./engine-context.ts";
import type { BoardRow, CheckItem, TargetConfig, TargetsApi, TargetView } from "./types.ts";

/** listLive: the rows that may run or wait (the live summary: O(live rows)); listRows: every row. */
export function targetsApi(
	ctx: EngineContext,
	listLive: () => Promise<BoardRow[]>,
	listRows: () => Promise<BoardRow[]>,
): TargetsApi {
	function known(name: string): TargetConfig {
		const config = readBoardConfig(ctx.storeDir).targets[name];
		if (!config) throw new BoardError("invalid", `unknown target ${name}`);
		return config;
	}

	/** A target's view without its rows. */
	function viewOf(name: string, target: TargetConfig): TargetView {
		const kind = kindOf(target);
		const members = membersOf(target);
		return {
			name,
			kind: target.kind,
			where: kind.describe(target),
			max: target.max,
			running: 0,
			queued: 0,
			config: target,
			...(target.drained === true ? { drained: true } : {}),
			...(kind.checkArgs ? { checkArgs: kind.checkArgs } : {}),
			...(members ? { members } : {}),
		};
	}

	/** What the target's link last heard of it (its load), and whether a pool would place a run there now. */
	function healthOf(view: TargetView): Pick<TargetView, "load" | "takes" | "check" | "unreachable"> {
		if (view.members || view.name === LOCAL_TARGET) return {};
		const health = readHealth(ctx.storeDir, view.name);
		const check = readCheck(ctx.storeDir, view.name);
		const why = unplaceable(
			{
				name: view.name,
				max: view.max,
				live: view.running,
				...(health ? { health } : {}),
				...(check ? { check } : {}),
			},
			Date.now(),
		);
		const unreachable =
			!view.unreachable && health && !health.reachable
				? { unreachable: { since: health.since ?? health.at, reason: health.reason ?? "no answer" } }
				: {};
		return {
			...(health?.load !== undefined
				? { load: { load: health.load, cpus: health.cpus ?? 1, at: health.loadAt ?? health.at } }
				: {}),
			...(check ? { check } : {}),
			...unreachable,
			takes: view.drained ? { ok: false, why: "drained" } : why ? { ok: false, why } : { ok: true },
		};
	}

	const api: TargetsApi = {
		async list() {
			const config = readBoardConfig(ctx.storeDir);
			// Running, queued and unreachable rows are all live: S and `targets` never read the whole store.
			const rows = await listLive();
			const withRows = (view: TargetView): TargetView => {
				// A pool counts the rows dispatched to it; a target the rows on it, a pool's placed there included.
				const here = rows.filter(
					(row) =>
						(view.members ? row.target : row.state === "queued" ? row.target : (row.host ?? row.target)) ===
							view.name ||
						(view.name === LOCAL_TARGET && !row.target),
				);
				const unreachable = here
					.flatMap((row) => (row.unreachable ? [row.unreachable] : []))
					.sort((a, b) => a.since - b.since)[0];
				const counted = {
					...view,
					running: here.filter((row) => phase(row).phase === "live" || phase(row).why === "unowned").length,
					queued: here.filter((row) => phase(row).why === "queued").length,
					...(unreachable ? { unreachable } : {}),
				};
				return { ...counted, ...healthOf(counted) };
			};
			const local: TargetView = {
				name: LOCAL_TARGET,
				kind: LOCAL_TARGET,
				where: "this machine",
				max: config.maxRunning ?? ctx.maxConcurrent,
				running: 0,
				queued: 0,
			};
			return [
				withRows(local),
				...Object.entries(config.targets).map(([name, target]) => withRows(viewOf(name, target))),
			];
		},
		async add(name, input) {
			ctx.init();
			let target: TargetConfig | undefined;
			await updateBoardConfig(ctx.storeDir, (config) => {
				const added = targetFromInput(input, config);
				config.targets[checkNewTargetName(config, name)] = added;
				target = added;
			});
			return viewOf(name, target ?? targetFromInput(input, readBoardConfig(ctx.storeDir)));
		},
		async remove(name) {
			const config = known(name);
			const pools = Object.entries(readBoardConfig(ctx.storeDir).targets).filter(([, other]) =>
				membersOf(other)?.includes(name),
			);
			if (pools.length > 0)
				throw new BoardError(
					"busy",
					`target ${name} is a member of ${pools.map(([pool]) => pool).join(", ")}: remove ${pools.length === 1 ? "that pool" : "those pools"} first`,
				);
			const busy = (await listRows()).filter((row) => row.target === name && notOver(row));
			if (busy.length > 0)
				throw new BoardError(
					"busy",
					`target ${name} has ${busy.length} row(s) running or waiting there (${busy.map((row) => row.id).join(", ")}): stop them first`,
				);
			await updateBoardConfig(ctx.storeDir, (current) => {
				delete current.targets[name];
			});
			kindOf(config).forget?.({ ...config, name }, { storeDir: ctx.storeDir });
			rmSync(join(ctx.storeDir, "targets", name, "slots"), { recursive: true, force: true });
			// What was known of its health goes with it: a target added again under this name starts afresh.
			for (const file of ["health.json", "check.json"])
				rmSync(join(ctx.storeDir, "targets", name, "link", file), { force: true });
		},
		async check(name, options = {}) {
			const checkOne = async (target: string, config: TargetConfig): Promise<CheckItem[]> => {
				// The --env values go as a run's do (in the program on stdin, never argv): they may hold the model's key.
				const env = Object.fromEntries(
					config.env.flatMap((key) => (ctx.env[key] === undefined ? [] : [[key, String(ctx.env[key])]])),
				);
				const checkMember = async (member: string): Promise<CheckItem[]> => {
					const memberConfig = readBoardConfig(ctx.storeDir).targets[member];
					if (!memberConfig)
						return [
							{
								name: "target",
								ok: false,
								detail: `${member} is not a target any more`,
								fix: "add it again, or make the pool anew without it",
							},
						];
					return checkOne(member, memberConfig);
				};
				const items = await kindOf(config).check(
					{ ...config, name: target },
					{
						storeDir: ctx.storeDir,
						agentDir: ctx.env.PI_CODING_AGENT_DIR || getAgentDir(),
						install: options.install === true,
						env,
						checkMember,
						...(options.progress ? { progress: options.progress } : {}),
					},
				);
				// A pool's placement reads it: a target failing its check takes nothing until one passes.
				if (!membersOf(config)) recordCheck(ctx.storeDir, target, items);
				return items;
			};
			const items = await checkOne(name, known(name));
			return { target: name, ok: items.every((item) => item.ok), items };
		},
		async setLimit(name, max) {
			if (!Number.isInteger(max) || max < 1)
				throw new BoardError("invalid", `a limit must be a whole number >= 1 (got ${JSON.stringify(max)})`);
			ctx.init();
			await updateBoardConfig(ctx.storeDir, (config) => {
				if (name === LOCAL_TARGET) config.maxRunning = max;
				else if (config.targets[name]) config.targets[name].max = max;
				else throw new BoardError("invalid", `unknown target ${name}`);
			});
			// Applied at once to what is queued.
			ctx.pump(true);
		},
		async set(name, given) {
			known(name);
			let changed: TargetConfig | undefined;
			await updateBoardConfig(ctx.storeDir, (config) => {
				const current = config.targets[name];
				if (!current) throw new BoardError("invalid", `unknown target ${name}`);
				changed = changedTarget(name, current, given, config.targets);
				config.targets[name] = changed;
			});
			ctx.pump(true);
			return viewOf(name, changed ?? known(name));
		},
		async drain(name, drained) {
			known(name);
			let changed: TargetConfig | undefined;
			await updateBoardConfig(ctx.storeDir, (config) => {
				const current = config.targets[name];
				if (!current) throw new BoardError("invalid", `unknown target ${name}`);
				changed = drainedTarget(current, drained);
				config.targets[name] = changed;
			});
			// Undrained: what waits for it may start now.
			ctx.pump(true);
			const view = (await api.list()).find((one) => one.name === name);
			return view ?? viewOf(name, changed ?? known(name));
		},
	};
	return api;
}
