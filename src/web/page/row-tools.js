// The sheets of a row's tools, as the TUI's keys: its diff (or two attempts'), its transcript following
// the stream, keep one attempt, remove its worktree (asked again before forcing), rename, raise a
// budget; and the targets table. Each asks the server, which calls the engine the TUI's key calls.
import { getJson, rowAction, rowGet } from "./api.js";
import { el, fill } from "./dom.js";

const enc = encodeURIComponent;

function buttons(...nodes) {
	return el("div", { class: "buttons" }, nodes);
}

function button(text, onClick, kind = "") {
	return el("button", { class: kind, text, attrs: { type: "button" }, on: { click: onClick } });
}

/** A diff as git gives it, each line coloured by its first character. */
function diffBlock(lines, more) {
	const kind = (line) =>
		line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("@@")
			? "hunk"
			: line.startsWith("+")
				? "add"
				: line.startsWith("-")
					? "del"
					: "";
	return el("div", { class: "diff" }, [
		...lines.map((line) => el("div", { class: `diff-line ${kind(line)}`, text: line || " " })),
		more ? el("p", { class: "meta", text: `… ${more} more lines (the TUI's d shows them all)` }) : null,
	]);
}

/** The row against its branch point, or (`against`) two attempts' current files. */
export async function openDiff(sheet, id, against, back) {
	const diff = await getJson(`/api/rows/${enc(id)}/diff${against ? `?against=${enc(against)}` : ""}`);
	sheet.show(`Diff: ${diff.title}`, [back ? buttons(button("Back", back)) : null, diffBlock(diff.lines, diff.more)]);
}

const ROLE = { user: "you", assistant: "agent", tool: "tool", error: "error", info: "info" };
const SENT = { steer: "steer", followUp: "follow-up", answer: "answer", reply: "reply: new run" };
const WAITING = {
	steer: "lands after the current step",
	followUp: "lands after this turn",
	answer: "sent",
	reply: "sent",
};

function entryNode(entry) {
	const mark = entry.sent ? `(${SENT[entry.sent]}${entry.waiting ? `, ${WAITING[entry.sent]}` : ""}) ` : "";
	return el("li", { class: `entry ${entry.role}` }, [
		el("span", { class: "role", text: ROLE[entry.role] ?? entry.role }),
		el("pre", { text: mark + entry.text }),
	]);
}

/**
 * The transcript of the row's session (its current branch, each message you sent marked as the TUI
 * marks it), followed live: each pushed change of the row re-reads it, at most once a second, and
 * the words streaming now follow its end. It stays at the end while you are there.
 */
export async function openTranscript(sheet, id, rowEvents) {
	const list = el("ul", { class: "transcript" });
	const live = el("p", { class: "stream" });
	let loading = false;
	let again = false;
	let last = 0;
	const load = async () => {
		if (loading) {
			again = true;
			return;
		}
		loading = true;
		try {
			const wait = Math.max(0, last + 1000 - Date.now());
			if (wait) await new Promise((resolve) => setTimeout(resolve, wait));
			const t = await rowGet(id, "transcript");
			last = Date.now();
			const atEnd = sheet.root.scrollTop + sheet.root.clientHeight >= sheet.root.scrollHeight - 40;
			sheet.title.textContent = `Transcript: ${t.name}`;
			fill(list, t.entries.map(entryNode));
			live.textContent = t.liveText ?? "";
			live.hidden = !t.liveText;
			if (atEnd) sheet.root.scrollTop = sheet.root.scrollHeight;
		} finally {
			loading = false;
			if (again) {
				again = false;
				void load();
			}
		}
	};
	const onRow = (event) => {
		if (event.detail === id) void load().catch(() => undefined);
	};
	sheet.show("Transcript", [list, live]);
	rowEvents.addEventListener("row", onRow);
	sheet.onHide(() => rowEvents.removeEventListener("row", onRow));
	await load();
	sheet.root.scrollTop = sheet.root.scrollHeight;
}

/** Keep one attempt: the plan as the TUI asks it, then the keep; worktrees it left are a second question. */
export async function openKeep(sheet, id, toast, back) {
	const plan = await rowGet(id, "keep-plan");
	const result = el("div", { class: "merge-result" });
	const go = button(
		"Keep",
		async () => {
			go.disabled = true;
			try {
				const kept = await rowAction(id, "keep");
				if (kept.status === "conflict") {
					const text = el("textarea", {
						class: "prompt",
						attrs: { rows: "6", "aria-label": "follow-up to the row" },
					});
					text.value = kept.followUp;
					return fill(result, [
						el("p", { class: "error-text", text: kept.message }),
						text,
						buttons(
							button(
								"Send this follow-up",
								async () => {
									toast((await rowAction(id, "reply", { text: text.value })).message);
									back();
								},
								"primary",
							),
						),
					]);
				}
				toast(kept.message);
				if (!kept.question) return back();
				fill(result, [
					el("p", { class: "warning", text: kept.question }),
					buttons(
						button(
							"Remove anyway",
							async () => {
								try {
									toast(
										(await rowAction(id, "keep-force", { rows: kept.refused, done: kept.message })).message,
									);
								} catch (e) {
									toast(e.message, "error");
								}
								back();
							},
							"danger",
						),
						button("Leave them", back),
					),
				]);
			} catch (e) {
				fill(result, [el("p", { class: "error-text", text: `keep failed: ${e.message}` })]);
			}
		},
		"primary",
	);
	sheet.show("Keep", [
		el("p", { text: plan.question }),
		...plan.details.map((line) => el("p", { class: "warning", text: line })),
		buttons(go, button("Cancel", back)),
		result,
	]);
}

/** As `w`: asks first; git's refusal (changes in it) asks again before forcing. */
export function openRemoveWorktree(sheet, row, toast) {
	const result = el("div", { class: "merge-result" });
	const remove = async (force) => {
		try {
			const done = await rowAction(row.id, "remove-worktree", { force });
			if (done.status === "removed") {
				toast(done.message);
				return sheet.hide();
			}
			fill(result, [
				el("p", { class: "warning", text: done.question }),
				buttons(
					button("Force-remove", () => void remove(true), "danger"),
					button("Cancel", () => sheet.hide()),
				),
			]);
		} catch (e) {
			fill(result, [el("p", { class: "error-text", text: `not removed: ${e.message}` })]);
		}
	};
	sheet.show("Remove worktree", [
		el("p", { text: `Remove the worktree of ${row.name}?` }),
		buttons(
			button("Remove", () => void remove(false), "danger"),
			button("Cancel", () => sheet.hide()),
		),
		result,
	]);
}

/**
 * One text field and a button: rename, raise a budget.
 * @param {import("./panels.js").Sheet} sheet @param {string} title
 * @param {{ label: string, value?: string, placeholder?: string, note?: string, send: (text: string) => Promise<unknown>, go: string }} options
 */
function askText(sheet, title, { label, value = "", placeholder = "", note, send, go }) {
	const input = el("input", { attrs: { type: "text", "aria-label": label, placeholder, autocapitalize: "off" } });
	input.value = value;
	const error = el("p", { class: "form-error", attrs: { role: "alert" } });
	const submit = async () => {
		error.textContent = "";
		try {
			await send(input.value);
			sheet.hide();
		} catch (e) {
			error.textContent = e.message;
		}
	};
	input.addEventListener("keydown", (event) => {
		if (event.key === "Enter") void submit();
	});
	sheet.show(title, [
		note ? el("p", { class: "meta", text: note }) : null,
		el("label", { class: "field" }, [el("span", { text: label }), input]),
		error,
		buttons(
			button(go, () => void submit(), "primary"),
			button("Cancel", () => sheet.hide()),
		),
	]);
	input.focus();
}

export function openRename(sheet, row, toast) {
	askText(sheet, "Rename", {
		label: "name",
		value: row.name,
		go: "Rename",
		send: async (name) => toast((await rowAction(row.id, "rename", { name })).message),
	});
}

export function openBudget(sheet, row, toast) {
	askText(sheet, "Budget", {
		label: "how much it may spend",
		placeholder: "50k, 2M tokens or $2",
		note: row.usage ? `now: ${row.usage}` : "no budget yet",
		go: "Set budget",
		send: async (amount) => toast((await rowAction(row.id, "budget", { amount })).message),
	});
}

/** Where rows run, as `/agent-board targets` prints them (one card a target on a phone); adding and checking stay commands. */
export async function openTargets(sheet) {
	const { targets } = await getJson("/api/targets");
	sheet.show("Targets", [
		el(
			"ul",
			{ class: "targets" },
			targets.map((t) =>
				el("li", { class: `target${t.state === "ok" ? "" : " unwell"}` }, [
					el("p", {}, [el("strong", { text: t.name }), ` · ${t.where}`]),
					el("p", {
						class: "meta",
						text: [
							`running ${t.running}/${t.max}`,
							`queued ${t.queued}`,
							t.load && t.load !== "-" ? `load ${t.load}` : "",
						]
							.filter(Boolean)
							.join(" · "),
					}),
					el("p", { class: t.state === "ok" ? "meta" : "warning", text: t.state }),
				]),
			),
		),
		el("p", { class: "meta", text: "Add, check or drain targets with /agent-board targets (targets --help)." }),
	]);
}
