// The page's search box: everything that ran (prompts, the agent's text, tool calls and output, questions
// and answers, errors, changed files), as /api/search finds it. Each hit is a row: its name and id, where it
// matched and the words around, the matches marked. Tapping one opens its card on the board. All text goes
// in as text.
import { getJson } from "./api.js";
import { el, fill } from "./dom.js";

/** A pause in typing this long asks the server. */
const TYPING_PAUSE_MS = 300;

/** The snippet as text nodes, each match in a <mark>. */
function snippetNodes(snippet) {
	if (!snippet) return [];
	const nodes = [];
	let at = 0;
	for (const [start, end] of snippet.matches) {
		if (start < at) continue;
		nodes.push(snippet.text.slice(at, start), el("mark", { text: snippet.text.slice(start, end) }));
		at = end;
	}
	nodes.push(snippet.text.slice(at));
	return nodes;
}

function hitItem(hit, open) {
	const tags = [hit.state.replace(/_/g, " "), hit.archived ? "archived" : "", hit.place].filter(Boolean).join(" · ");
	return el("li", { class: "hit", attrs: { "data-id": hit.rowId } }, [
		el("button", { class: "hit-open", attrs: { type: "button" }, on: { click: () => open(hit) } }, [
			el("span", { class: "hit-name", text: hit.name || hit.rowId }),
			el("span", { class: "hit-tags", text: `${hit.rowId} · ${tags}` }),
			el("span", { class: "hit-where", text: hit.fields.length ? `found in ${hit.fields.join(", ")}` : "" }),
			el("span", { class: "hit-snippet" }, snippetNodes(hit.snippet)),
		]),
	]);
}

/**
 * Wires the search box: `input` the text field, `results` the list under it, `open(hit)` what a tap does.
 * @param {HTMLInputElement} input @param {HTMLElement} results @param {(hit: any) => void} open
 */
export function searchBox(input, results, open) {
	let timer;
	let asked = "";
	const show = (children) => {
		fill(results, children);
		results.hidden = children.length === 0;
	};
	const run = async (text) => {
		asked = text;
		if (!text.trim()) return show([]);
		let body;
		try {
			body = await getJson(`/api/search?q=${encodeURIComponent(text)}`);
		} catch (error) {
			if (asked === text) show([el("p", { class: "hit-note", text: error.message })]);
			return;
		}
		if (asked !== text) return;
		const notes = [...(body.errors ?? []), ...(body.note ? [body.note] : [])];
		show([
			...notes.map((note) => el("p", { class: "hit-note", text: note })),
			body.hits.length === 0
				? el("p", { class: "hit-note", text: `Nothing that ran matches ${text}.` })
				: el(
						"ul",
						{ class: "hits" },
						body.hits.map((hit) => hitItem(hit, open)),
					),
		]);
	};
	input.addEventListener("input", () => {
		clearTimeout(timer);
		timer = setTimeout(() => void run(input.value), TYPING_PAUSE_MS);
	});
	input.addEventListener("keydown", (event) => {
		if (event.key === "Enter") {
			clearTimeout(timer);
			void run(input.value);
		}
		if (event.key === "Escape") {
			input.value = "";
			void run("");
		}
	});
}
