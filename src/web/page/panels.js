// Sheets over the board: a new agent (prompt + the remembered choices), an attempt set compared, and
// a merge with the same plan and conflict report as the TUI (the server words the question with the
// TUI's own function). A conflict offers the follow-up that asks the row to catch up.
import { getJson, postJson, rowAction, rowGet } from "./api.js";
import { el, fill } from "./dom.js";
import { attemptTools, removeAfterMerge } from "./attempt-tools.js";

/** One sheet at a time; Escape and the close button take it away. */
export class Sheet {
	constructor(host) {
		/** @type {(() => void)[]} */
		this.leaving = [];
		this.title = el("h2", { class: "sheet-title" });
		this.content = el("div", { class: "sheet-content" });
		this.close = el("button", {
			class: "close",
			text: "Close",
			attrs: { type: "button" },
			on: { click: () => this.hide() },
		});
		this.root = el("div", { class: "sheet", attrs: { role: "dialog", "aria-modal": "true" } }, [
			el("div", { class: "sheet-bar" }, [this.title, this.close]),
			this.content,
		]);
		this.root.hidden = true;
		host.append(this.root);
		document.addEventListener("keydown", (event) => {
			if (event.key === "Escape" && !this.root.hidden) this.hide();
		});
	}

	show(title, children) {
		this.hidden();
		this.title.textContent = title;
		fill(this.content, children);
		this.root.hidden = false;
		document.body.classList.add("sheet-open");
		this.root.scrollTop = 0;
	}

	/** Runs `fn` when this sheet's content goes (hidden, or replaced by another). */
	onHide(fn) {
		this.leaving.push(fn);
	}

	hidden() {
		for (const fn of this.leaving.splice(0)) fn();
	}

	hide() {
		this.hidden();
		this.root.hidden = true;
		document.body.classList.remove("sheet-open");
		fill(this.content, []);
	}
}

function field(label, control) {
	return el("label", { class: "field" }, [el("span", { text: label }), control]);
}

function select(values, current) {
	const node = el(
		"select",
		{},
		values.map((value) => el("option", { text: value, attrs: { value } })),
	);
	node.value = current;
	return node;
}

/** The new-agent sheet: prompt first, then a preset or the remembered choices (the options). */
export async function openDispatch(sheet, toast) {
	const form = await getJson("/api/dispatch");
	const c = form.choices;
	const prompt = el("textarea", {
		class: "prompt",
		attrs: { rows: "5", placeholder: "What should the agent do?", "aria-label": "prompt" },
	});
	const controls = {
		name: el("input", { attrs: { type: "text", placeholder: "optional" } }),
		cwd: el("input", { attrs: { type: "text", autocapitalize: "off", spellcheck: "false" } }),
		target: select(form.targets, c.target),
		model: el("input", { attrs: { type: "text", list: "models", autocapitalize: "off", spellcheck: "false" } }),
		thinking: select(form.thinking, c.thinking),
		worktree: select(form.worktree, c.worktree),
		count: select(form.counts, c.count),
	};
	const setChoices = (choices) => {
		for (const [key, node] of Object.entries(controls)) if (key in choices) node.value = choices[key];
	};
	setChoices(c);
	// A preset sets its choices (what it does not say keeps the form's); none puts back the remembered ones.
	const presets = form.presets ?? [];
	const preset = select(["none", ...presets.map((p) => p.name)], "none");
	const presetNote = el("p", { class: "meta" });
	const models = el(
		"datalist",
		{ attrs: { id: "models" } },
		form.models.map((m) => el("option", { attrs: { value: m } })),
	);
	const error = el("p", { class: "form-error", attrs: { role: "alert" } });
	const start = el("button", { class: "primary", text: "Start", attrs: { type: "button" } });
	start.addEventListener("click", async () => {
		error.textContent = "";
		start.disabled = true;
		try {
			const body = Object.fromEntries(Object.entries(controls).map(([key, node]) => [key, node.value]));
			const result = await postJson("/api/dispatch", { ...body, preset: preset.value, prompt: prompt.value });
			sheet.hide();
			toast(result.message);
		} catch (e) {
			// Refused: the prompt stays, with the engine's reason.
			error.textContent = `not started: ${e.message}`;
		} finally {
			start.disabled = false;
		}
	});
	const summary = el("p", { class: "choices-summary", text: form.summary });
	const options = el("details", {}, [
		el("summary", { text: "Options" }),
		field("name", controls.name),
		field("cwd", controls.cwd),
		field("where", controls.target),
		field("model", controls.model),
		models,
		field("thinking", controls.thinking),
		field("worktree", controls.worktree),
		field("attempts", controls.count),
	]);
	// The summary says what the choices are; opened, the options say it themselves.
	options.addEventListener("toggle", () => (summary.hidden = options.open));
	preset.addEventListener("change", () => {
		const picked = presets.find((p) => p.name === preset.value);
		setChoices(picked ? picked.choices : c);
		summary.textContent = picked ? picked.summary : form.summary;
		presetNote.textContent = picked ? (picked.error ? `cannot be used: ${picked.error}` : picked.description) : "";
	});
	sheet.show("New agent", [
		prompt,
		presets.length ? field("preset", preset) : null,
		presetNote,
		summary,
		options,
		error,
		el("div", { class: "buttons" }, [start]),
	]);
	prompt.focus();
}

/** The merge of one row: the plan as the TUI asks it, then the merge; a conflict offers the follow-up. */
export async function openMerge(sheet, id, toast, back) {
	const plan = await rowGet(id, "merge-plan");
	const result = el("div", { class: "merge-result" });
	const go = el("button", { class: "primary", text: "Merge", attrs: { type: "button" } });
	go.addEventListener("click", async () => {
		go.disabled = true;
		try {
			const merged = await rowAction(id, "merge", { commit: plan.commit });
			if (merged.status !== "conflict") {
				toast(merged.message);
				// As the TUI after y: the merged worktree may go now.
				return removeAfterMerge(result, id, toast, () => (back ? back() : sheet.hide()));
			}
			const text = el("textarea", { class: "prompt", attrs: { rows: "6", "aria-label": "follow-up to the row" } });
			text.value = merged.followUp;
			const send = el("button", { class: "primary", text: "Send this follow-up", attrs: { type: "button" } });
			send.addEventListener("click", async () => {
				try {
					toast((await rowAction(id, "reply", { text: text.value })).message);
					back ? back() : sheet.hide();
				} catch (e) {
					toast(e.message, "error");
				}
			});
			fill(result, [
				el("p", { class: "error-text", text: merged.message }),
				text,
				el("div", { class: "buttons" }, [send]),
			]);
		} catch (e) {
			fill(result, [el("p", { class: "error-text", text: `merge failed: ${e.message}` })]);
		}
	});
	sheet.show("Merge", [
		el("p", { class: plan.conflicts.length ? "warning" : "", text: plan.question }),
		plan.plan.files.length
			? el(
					"ul",
					{ class: "files" },
					plan.plan.files.map((f) => el("li", { text: f })),
				)
			: null,
		el("div", { class: "buttons" }, [
			go,
			el("button", {
				text: "Cancel",
				attrs: { type: "button" },
				on: { click: () => (back ? back() : sheet.hide()) },
			}),
		]),
		result,
	]);
}

/** An attempt set side by side: state, diff stats, files, overlaps; each finished attempt can be merged. */
export async function openCompare(sheet, id, states, toast) {
	const set = await rowGet(id, "compare");
	const reopen = () => void openCompare(sheet, id, states, toast).catch((e) => toast(e.message, "error"));
	const entries = set.rows.map(({ row, files, overlaps }) => {
		const state = states[row.state] ?? { glyph: "?", label: row.state };
		const running = row.alive || row.state === "working" || row.state === "queued";
		const stats = row.diff
			? `+${row.diff.added} -${row.diff.removed} ${row.diff.files}f`
			: files.length
				? `${files.length}f`
				: "no diff";
		return el("li", { class: `attempt state-${row.state}` }, [
			el("p", { class: "attempt-head" }, [
				el("span", { class: "glyph", text: state.glyph }),
				el("strong", { text: row.attempt ? `#${row.attempt.index}` : row.id }),
				` ${row.merged ? `merged → ${row.merged.into}` : state.label} · ${stats} · ${row.name}`,
			]),
			files.length ? el("p", { class: "meta", text: `files: ${files.join(", ")}` }) : null,
			...overlaps.map((o) => el("p", { class: "warning", text: `overlap: ${o.file} (with ${o.rows.join(", ")})` })),
			row.summary ? el("p", { class: "summary", text: row.summary }) : null,
			el("div", { class: "buttons" }, [
				!row.merged && !running && row.worktree
					? el("button", {
							text: "Merge this one",
							attrs: { type: "button" },
							on: {
								click: () =>
									void openMerge(sheet, row.id, toast, reopen).catch((e) => toast(e.message, "error")),
							},
						})
					: null,
				...attemptTools(sheet, row, set.rows, running, toast, reopen),
			]),
		]);
	});
	const merged = set.rows.filter((entry) => entry.row.merged).length;
	const head = `${set.rows.length} attempt${set.rows.length === 1 ? "" : "s"}${merged ? ` · ${merged} merged` : ""}${set.repo ? ` · ${set.repo}` : ""}`;
	sheet.show(set.setId ? `Attempt set ${set.setId}` : "Compare", [
		el("p", { class: "meta", text: head }),
		el("ul", { class: "attempts" }, entries),
	]);
}
