/**
 * The page's new-agent form: a preset or the remembered choices (the store's dashboard prefs, as the
 * TUI's `n` keeps them), the places a run can go, and the dispatch itself through the service. The choices are
 * checked here against the same word lists the TUI offers; the engine checks them again.
 */
import { homedir } from "node:os";
import { LOCAL_TARGET } from "../../../runner/life/vocabulary.mjs";
import { MAX_MESSAGE_BYTES } from "../../../runner/life/reasons.mjs";
import {
	choicesSummary,
	COUNTS,
	DEFAULT,
	type DispatchChoices,
	dispatchOptions,
	initialChoices,
	THINKING_LEVELS,
	WORKTREE_MODES,
} from "../../board/view-model/dispatch-choices.ts";
import type { BoardService, PresetSummary } from "../../board/engine/types.ts";
import { NO_PRESET, presetChoices, presetDescription } from "../../board/view-model/preset-choices.ts";
import type { BoardFeed } from "../../board/view-model/feed.ts";
import { loadPrefs, savePrefs } from "../../board/view-model/prefs.ts";
import { clean } from "../../board/view-model/row-text.ts";
import { HttpError, optString } from "./http-util.ts";

async function targetNames(service: BoardService): Promise<string[]> {
	const views = await service.targets.list().catch(() => []);
	return [LOCAL_TARGET, ...views.map((view) => view.name).filter((name) => name !== LOCAL_TARGET)];
}

/** Models to offer: pi's default, the remembered one and those the board's rows used (the server has no model registry). */
function modelNames(feed: BoardFeed, remembered: string | undefined): string[] {
	const seen = new Set<string>();
	if (remembered) seen.add(remembered);
	for (const row of feed.rows()) {
		for (const model of [row.model, row.modelUsed]) if (model && seen.size < 24) seen.add(clean(model));
	}
	return [DEFAULT, ...seen];
}

/** The presets a dispatch from `cwd` may name, each with the choices it sets and their summary (as the TUI's form shows them). */
function presetsFor(
	service: BoardService,
	choices: DispatchChoices,
): { name: string; description: string; error?: string; choices: DispatchChoices; summary: string }[] {
	let presets: PresetSummary[] = [];
	try {
		presets = service.presets?.(choices.cwd) ?? [];
	} catch {
		presets = [];
	}
	return presets.map((preset) => {
		const set = presetChoices(preset, choices);
		return {
			name: preset.name,
			description: presetDescription(preset),
			...(preset.error ? { error: clean(preset.error) } : {}),
			choices: set,
			summary: choicesSummary(set, homedir()),
		};
	});
}

export async function dispatchForm(
	service: BoardService,
	feed: BoardFeed,
	cwd: string,
): Promise<Record<string, unknown>> {
	const prefs = await loadPrefs(service.storeDir);
	const targets = await targetNames(service);
	const models = modelNames(feed, prefs.model);
	const choices = initialChoices(prefs, models, cwd, targets);
	return {
		choices,
		presets: presetsFor(service, choices),
		summary: choicesSummary(choices, homedir()),
		targets,
		models,
		thinking: [DEFAULT, ...THINKING_LEVELS],
		worktree: [...WORKTREE_MODES],
		counts: COUNTS,
	};
}

function oneOf(value: string | undefined, allowed: readonly string[], field: string, fallback: string): string {
	if (value === undefined || value === "") return fallback;
	if (!allowed.includes(value)) throw new HttpError(400, `${field} must be one of ${allowed.join(", ")}`);
	return value;
}

export async function startDispatch(
	service: BoardService,
	feed: BoardFeed,
	body: Record<string, unknown>,
): Promise<{ message: string; rows: string[] }> {
	const prompt = optString(body, "prompt", MAX_MESSAGE_BYTES) ?? "";
	if (!prompt.trim()) throw new HttpError(400, "type a prompt first");
	const cwd = (optString(body, "cwd") ?? "").trim();
	if (!cwd) throw new HttpError(400, "cwd is required");
	const targets = await targetNames(service);
	const preset = (optString(body, "preset", 200) ?? "").trim() || NO_PRESET;
	const choices: DispatchChoices = {
		// Checked by the engine, which refuses a preset it cannot find or use with its reason.
		preset,
		name: optString(body, "name", 200) ?? "",
		cwd,
		target: oneOf(optString(body, "target"), targets, "target", LOCAL_TARGET),
		// Any model pi knows: the engine passes it to pi, which refuses an unknown one on the row.
		model: (optString(body, "model", 200) ?? "").trim() || DEFAULT,
		thinking: oneOf(optString(body, "thinking"), [DEFAULT, ...THINKING_LEVELS], "thinking", DEFAULT),
		worktree: oneOf(optString(body, "worktree"), WORKTREE_MODES, "worktree", "none"),
		count: oneOf(optString(body, "count"), COUNTS, "count", "1"),
	};
	const options = dispatchOptions(choices, prompt);
	// Remembered for the next dispatch, here and in the TUI, as the TUI's form does; a preset's choices are the preset's.
	if (!options.preset) {
		const prefs = await loadPrefs(service.storeDir);
		Object.assign(prefs, {
			cwd: options.cwd,
			target: choices.target,
			model: options.model,
			thinking: options.thinking,
			worktreeMode: options.worktreeMode,
		});
		await savePrefs(service.storeDir, prefs).catch(() => undefined);
	}
	const rows = await service.dispatchAttempts(options);
	for (const row of rows) feed.put(row);
	const what = clean(options.name ?? prompt.split("\n")[0]?.slice(0, 40));
	return {
		message: rows.length > 1 ? `dispatched ${rows.length} attempts of ${what}` : `dispatched ${what}`,
		rows: rows.map((row) => row.id),
	};
}
