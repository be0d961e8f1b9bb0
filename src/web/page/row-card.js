// One row of the board as a card: name, state, what it does now (tool, streamed words), its question
// with one-tap choices and an answer box in place, receipts, diff stats and attempt tags; opened, its
// actions and details. Updates replace the card's text, never its answer box (typing survives a stream).
import { rowAction, rowGet } from "./api.js";
import { age, clip, el, fill, tail } from "./dom.js";
import { moreActions, moreButtons, showAnswer } from "./row-more.js";

/** What the card needs from the page. */
/** @typedef {{ states: Record<string, { glyph: string, label: string }>, toast(text: string, kind?: string): void, openCompare(id: string): void, openMerge(id: string): void, openTool(name: string, row: any): void, expanded: Set<string> }} CardContext */

function liveLine(live) {
	if (!live) return [];
	if (live.retry) return [`retrying ${live.retry.attempt}/${live.retry.max}: ${live.retry.reason}`];
	if (live.compactingSince !== undefined) return ["compacting ", age(live.compactingSince)];
	if (live.tool)
		return [`${live.tool.name} `, age(live.tool.startedAt), live.tool.detail ? `: ${live.tool.detail}` : ""];
	if (live.waitingSince !== undefined) return ["waiting for the model ", age(live.waitingSince)];
	return [];
}

function metaParts(row) {
	const parts = [];
	if (row.attempt) parts.push(`[${row.attempt.index}/${row.attempt.count}]`);
	if (row.merged) parts.push(`merged → ${row.merged.into}`);
	else if (row.overlaps?.length) parts.push(`overlap: ${row.overlaps.map((o) => o.file).join(", ")}`);
	if (row.diff) parts.push(`+${row.diff.added} -${row.diff.removed} ${row.diff.files}f`);
	if (row.model) parts.push(row.model);
	if (row.usage) parts.push(row.usage);
	if (row.target !== "local") parts.push(`on ${row.target}`);
	return parts;
}

function receiptText(r) {
	const mark = r.status === "delivered" ? "✓" : r.status === "rejected" ? "✗" : "…";
	return `${mark} ${r.status}${r.as ? ` as ${r.as}` : ""}${r.reason ? ` (${r.reason})` : ""}: ${r.preview}`;
}

const COMPOSER = {
	needs_input: { placeholder: "Answer…", send: "Answer" },
	working: { placeholder: "Steer the agent…", send: "Steer" },
	queued: { placeholder: "Message (delivered when it starts)…", send: "Send" },
};

/** @typedef {import("../server/row-json.ts").PageRow} PageRow */

export class RowCard {
	/** @param {PageRow} row @param {CardContext} ctx */
	constructor(row, ctx) {
		this.ctx = ctx;
		this.row = row;
		this.detail = undefined;
		this.detailAt = 0;
		this.actionsKey = undefined;
		this.head = el("button", {
			class: "row-head",
			attrs: { type: "button", "aria-expanded": "false" },
			on: { click: () => this.toggle() },
		});
		this.body = el("div", { class: "row-body" });
		this.error = el("p", { class: "form-error", attrs: { role: "alert" } });
		this.input = el("textarea", {
			class: "composer-text",
			attrs: { rows: "2", "aria-label": "message to the agent" },
		});
		// Enter is a new line (phones have no other); ctrl/cmd+enter sends, as in a chat box.
		this.input.addEventListener("keydown", (event) => {
			if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) void this.send(false);
		});
		this.sendButton = el("button", {
			class: "primary",
			attrs: { type: "button" },
			on: { click: () => this.send(false) },
		});
		this.followButton = el("button", {
			attrs: { type: "button" },
			text: "Follow-up",
			on: { click: () => this.send(true) },
		});
		this.composer = el("div", { class: "composer" }, [
			this.input,
			el("div", { class: "buttons" }, [this.sendButton, this.followButton]),
			this.error,
		]);
		this.actions = el("div", { class: "actions" });
		this.details = el("div", { class: "details" });
		this.root = el("li", { class: "row" }, [this.head, this.body, this.composer, this.actions, this.details]);
		this.root.dataset.id = row.id;
		this.update(row);
	}

	get expanded() {
		return this.ctx.expanded.has(this.row.id);
	}

	toggle() {
		if (this.expanded) this.ctx.expanded.delete(this.row.id);
		else {
			this.ctx.expanded.add(this.row.id);
			void rowAction(this.row.id, "viewed").catch(() => undefined);
			void this.loadDetail(true);
		}
		this.update(this.row);
	}

	/** @param {PageRow} row */
	update(row) {
		const previous = this.row;
		this.row = row;
		const state = this.ctx.states[row.state] ?? { glyph: "?", label: row.state };
		this.root.className = `row state-${row.state}${row.unread ? " unread" : ""}${this.expanded ? " open" : ""}`;
		this.head.setAttribute("aria-expanded", String(this.expanded));
		fill(this.head, [
			el("span", { class: "glyph", text: state.glyph, title: state.label, attrs: { "aria-label": state.label } }),
			el("span", { class: "name", text: row.name }),
			row.unread
				? el("span", { class: "dot", title: "new activity", attrs: { "aria-label": "new activity" } })
				: null,
			age(row.lastActivityAt),
		]);
		// A question says what the agent waits for; its ask_user tool line would only repeat it.
		const live = row.question ? [] : liveLine(row.live);
		const streamed = row.liveText
			? el("p", { class: "stream", text: this.expanded ? row.liveText : tail(row.liveText, 240) })
			: null;
		const question = row.question
			? el("div", { class: "question" }, [
					el("p", { class: "question-text", text: row.question }),
					row.options?.length
						? el(
								"div",
								{ class: "choices" },
								row.options.map((option) =>
									el("button", {
										class: "choice",
										text: option,
										attrs: { type: "button" },
										on: { click: () => this.send(false, option) },
									}),
								),
							)
						: null,
				])
			: null;
		fill(this.body, [
			question
				? null
				: el("p", { class: "summary", text: clip(row.unreachable ?? row.summary, this.expanded ? 4000 : 280) }),
			live.length ? el("p", { class: "activity" }, live) : null,
			streamed,
			question,
			row.blocked ? el("p", { class: "warning", text: `blocked: ${row.blocked}` }) : null,
			row.error && !this.expanded ? el("p", { class: "error-text", text: clip(row.error, 280) }) : null,
			el("p", { class: "meta", text: metaParts(row).join(" · ") }),
			row.receipts?.length
				? el(
						"ul",
						{ class: "receipts" },
						row.receipts.slice(-3).map((r) => el("li", { class: r.status, text: receiptText(r) })),
					)
				: null,
		]);
		this.updateComposer(row);
		this.updateActions(row);
		if (this.expanded && (previous.updatedAt !== row.updatedAt || previous.state !== row.state))
			void this.loadDetail(false);
		if (!this.expanded) fill(this.details, []);
	}

	updateComposer(row) {
		const asking = row.state === "needs_input";
		this.composer.hidden = !(asking || this.expanded) || row.archived;
		const words = COMPOSER[row.state] ?? { placeholder: "Reply (a new run on the same session)…", send: "Reply" };
		this.input.placeholder = words.placeholder;
		this.sendButton.textContent = words.send;
		this.followButton.hidden = row.state !== "working";
	}

	/** The actions that apply now; the buttons are made again only when that changes (a stop armed by one tap survives a streaming update). */
	updateActions(row) {
		const running = row.alive || row.state === "working" || row.state === "queued";
		const which = this.expanded
			? [
					running ? "stop" : "",
					"transcript",
					row.worktree ? "diff" : "",
					row.attempt || row.worktree ? "compare" : "",
					row.worktree && !row.merged && !running ? "merge" : "",
					...moreActions(row, running),
					row.archived ? "unarchive" : "archive",
				].filter(Boolean)
			: [];
		const key = which.join(",");
		if (key === this.actionsKey) return;
		this.actionsKey = key;
		const id = row.id;
		const make = {
			...moreButtons(() => this.row, this.ctx),
			stop: () => this.confirmButton("Stop", "Really stop?", () => rowAction(id, "stop")),
			compare: () =>
				el("button", { text: "Compare", attrs: { type: "button" }, on: { click: () => this.ctx.openCompare(id) } }),
			merge: () =>
				el("button", { text: "Merge", attrs: { type: "button" }, on: { click: () => this.ctx.openMerge(id) } }),
			archive: () =>
				el("button", {
					text: "Archive",
					attrs: { type: "button" },
					on: { click: () => this.act(rowAction(id, "archive")) },
				}),
			unarchive: () =>
				el("button", {
					text: "Unarchive",
					attrs: { type: "button" },
					on: { click: () => this.act(rowAction(id, "unarchive")) },
				}),
		};
		fill(
			this.actions,
			which.map((name) => make[name]()),
		);
	}

	/** A button that asks again before it acts: the second tap within a few seconds confirms. */
	confirmButton(label, again, action) {
		const button = el("button", { class: "danger", text: label, attrs: { type: "button" } });
		let armed = 0;
		button.addEventListener("click", () => {
			if (Date.now() - armed < 4000) {
				armed = 0;
				button.textContent = label;
				void this.act(action());
				return;
			}
			armed = Date.now();
			button.textContent = again;
			setTimeout(() => {
				if (armed && Date.now() - armed >= 4000) button.textContent = label;
			}, 4100);
		});
		return button;
	}

	async act(promise) {
		try {
			const result = await promise;
			if (result?.message) this.ctx.toast(result.message);
		} catch (error) {
			this.ctx.toast(error.message, "error");
		}
	}

	async send(followUp, text = this.input.value) {
		if (!text.trim()) {
			this.error.textContent = "type a message first";
			return;
		}
		this.error.textContent = "";
		const typed = text === this.input.value;
		this.sendButton.disabled = true;
		try {
			const result = await rowAction(this.row.id, "reply", { text, followUp });
			if (typed) this.input.value = "";
			this.ctx.toast(result.message);
		} catch (error) {
			this.error.textContent = `not sent: ${error.message}`;
		} finally {
			this.sendButton.disabled = false;
		}
	}

	async loadDetail(force) {
		// A streaming row changes several times a second: its details are re-read at most every 1.5 s.
		if (!force && Date.now() - this.detailAt < 1500) return;
		this.detailAt = Date.now();
		try {
			this.detail = await rowGet(this.row.id);
		} catch (error) {
			this.detail = undefined;
			fill(this.details, [el("p", { class: "error-text", text: error.message })]);
			return;
		}
		if (this.expanded) this.renderDetail();
	}

	renderDetail() {
		const d = this.detail;
		if (!d) return;
		const section = (title, children) => el("section", {}, [el("h3", { text: title }), ...children]);
		fill(this.details, [
			el("dl", { class: "facts" }, [
				...[
					["id", d.id],
					["cwd", d.cwd],
					["branch", d.branch ?? ""],
					["attach", d.attach ?? ""],
				]
					.filter(([, value]) => value)
					.flatMap(([name, value]) => [el("dt", { text: name }), el("dd", { text: value })]),
			]),
			d.error ? section("Error", [el("pre", { class: "error-text", text: d.error })]) : null,
			showAnswer(d, this.row) ? section("Latest answer", [el("pre", { text: d.answer })]) : null,
			d.receipts?.length
				? section("Messages", [
						el(
							"ul",
							{ class: "receipts" },
							d.receipts.map((r) => el("li", { class: r.status, text: receiptText(r) })),
						),
					])
				: null,
			d.events.length
				? section("Events", [
						el(
							"ul",
							{ class: "events" },
							d.events.slice(-8).map((e) => el("li", {}, [age(e.at, " "), e.text])),
						),
					])
				: null,
			d.stderr ? section("stderr", [el("pre", { text: d.stderr })]) : null,
		]);
	}
}
