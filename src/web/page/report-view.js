// The morning report on the page: the server builds it as `/agent-board report` does (view-model's
// report.ts); here its sections, each row a link that opens the row on the board.
import { getJson } from "./api.js";
import { clip, el, fill } from "./dom.js";

const SINCE = ["12h", "24h", "2d", "7d", "today"];

function tokens(n) {
	if (n < 1000) return String(n);
	if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
	return `${(n / 1_000_000).toFixed(1)}M`;
}

function spent(total) {
	return `${tokens(total.tokens)} tok${total.cost > 0 ? ` $${total.cost < 0.01 ? total.cost.toFixed(4) : total.cost.toFixed(2)}` : ""}`;
}

/** A link to the row on the board: the sheet closes and the row opens. */
function rowLink(item, open) {
	const link = el("a", {
		class: "row-link",
		text: `${item.glyph ?? ""} ${item.name}`.trim(),
		attrs: { href: item.url },
	});
	link.addEventListener("click", (event) => {
		event.preventDefault();
		open(item.id ?? item.row);
	});
	return link;
}

function section(title, items) {
	if (items.length === 0) return null;
	return el("section", { class: "report-section" }, [
		el("h3", { text: `${title} (${items.length})` }),
		el("ul", { class: "report-list" }, items),
	]);
}

function render(report, open) {
	const row = (item) =>
		el("li", { class: `state-${item.state}` }, [
			rowLink(item, open),
			el("p", { class: "summary", text: clip(item.text, 280) }),
			item.note ? el("p", { class: "meta", text: item.note }) : null,
		]);
	const answer = (a) =>
		el("li", {}, [
			rowLink(a, open),
			el("p", { class: "question-text", text: a.question }),
			el("p", { class: "summary", text: `→ ${a.answer}` }),
			el("p", { class: "meta", text: a.byText }),
		]);
	const totals = (title, list) =>
		list.length
			? el("div", { class: "spend" }, [
					el("h4", { text: title }),
					el(
						"ul",
						{ class: "report-list" },
						list.map((t) => el("li", { text: `${t.key}: ${spent(t)}` })),
					),
				])
			: null;
	const spend = report.spend;
	return [
		el("p", { class: "report-headline", text: report.headline }),
		section("Waiting for you", report.waiting.map(row)),
		section("Failed", report.failed.map(row)),
		section("Finished", report.finished.map(row)),
		section("Stopped", report.stopped.map(row)),
		section("Still running", report.running.map(row)),
		section("Answered for you", report.answers.map(answer)),
		spend.day.length
			? el("section", { class: "report-section" }, [
					el("h3", { text: "Spend" }),
					totals("per target", spend.target),
					totals("per preset", spend.preset),
					totals("per day", spend.day),
					spend.rowsWithoutLedger
						? el("p", {
								class: "meta",
								text: `${spend.rowsWithoutLedger} row${spend.rowsWithoutLedger === 1 ? "" : "s"} without a budget count their whole usage on their last day.`,
							})
						: null,
				])
			: null,
	];
}

/** The report since 12 hours ago; the choice above it reads another span. */
export async function openReport(sheet, open) {
	const body = el("div", { class: "report" });
	const since = el(
		"select",
		{ attrs: { "aria-label": "since" } },
		SINCE.map((value) => el("option", { text: value === "today" ? "today" : `last ${value}`, attrs: { value } })),
	);
	const load = async () => {
		const report = await getJson(`/api/report?since=${encodeURIComponent(since.value)}`);
		fill(body, render(report, open));
	};
	since.addEventListener(
		"change",
		() => void load().catch((e) => fill(body, [el("p", { class: "error-text", text: e.message })])),
	);
	await load();
	sheet.show("Report", [el("label", { class: "field" }, [el("span", { text: "since" }), since]), body]);
}
