// The page: reads the session, opens one event stream, and keeps the board, the header counts and the
// notices up to date from what the server pushes. Nothing polls: a change arrives as an event.
import { getJson, session, whenLoggedOut } from "./api.js";
import { BoardView, countsText } from "./board-view.js";
import { el, fill, setSkew, tickAges } from "./dom.js";
import { enableNotifications, notificationsOn, notificationsSupported, notify, toaster } from "./notices.js";
import { openCompare, openDispatch, openMerge, Sheet } from "./panels.js";
import { openTool, revealFromUrl, rowEvents, toolbarTools } from "./page-tools.js";
import { searchBox } from "./search.js";

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const toast = toaster($("toasts"));
let loggedOut = false;
/** @type {EventSource | undefined} */
let source;

function setConnection(state, text) {
	const node = $("connection");
	node.className = `connection ${state}`;
	node.textContent = text;
}

function showLoggedOut() {
	if (loggedOut) return;
	loggedOut = true;
	source?.close();
	setConnection("out", "logged out");
	$("logged-out").hidden = false;
	$("board").hidden = true;
}

function status(data) {
	setSkew(data.now - Date.now());
	$("counts").textContent =
		countsText(data.counts) + (data.loading ? ` · loading ${data.loading.done}/${data.loading.total} rows` : "");
}

function connect(board) {
	source?.close();
	const stream = new EventSource("/api/events");
	source = stream;
	stream.addEventListener("snapshot", (event) => {
		const data = JSON.parse(event.data);
		board.reset(data.rows);
		status(data);
		setConnection("live", "live");
		revealFromUrl((id, answer) => void reveal(board, id, answer).catch((e) => toast(e.message, "error")));
	});
	stream.addEventListener("rows", (event) => {
		const data = JSON.parse(event.data);
		board.apply(data.rows, data.removed);
		status(data);
		for (const row of data.rows) rowEvents.dispatchEvent(new CustomEvent("row", { detail: row.id }));
	});
	stream.addEventListener("notice", (event) => {
		const notice = JSON.parse(event.data);
		toast(
			notice.text,
			notice.state === "failed" ? "error" : "notice",
			() => void reveal(board, notice.id).catch((e) => toast(e.message, "error")),
		);
		void notify(notice);
	});
	stream.addEventListener("error", () => {
		if (loggedOut) return;
		setConnection("retry", "reconnecting…");
		// EventSource retries by itself after a network error, but not after a refusal: ask which it was.
		void session().then(
			() => {
				if (stream.readyState === EventSource.CLOSED && source === stream) setTimeout(() => connect(board), 1000);
			},
			() => undefined,
		);
	});
}

/**
 * A row's card opened and scrolled to (a report's link, a notice's, the URL's). A row beyond its group's
 * first rows is shown; an archived row has no card until the archived are shown: they are, when the row
 * is one of them.
 */
async function reveal(board, id, answer = false) {
	board.expose(id);
	if (!board.card(id) && $("archived").getAttribute("aria-pressed") !== "true") {
		const { rows } = await getJson("/api/rows?archived=1");
		if (rows.some((row) => row.id === id)) await showArchived(board, id);
	}
	const card = board.card(id);
	if (!card) return toast(`${id}: not on the board`, "error");
	if (!card.expanded) card.toggle();
	card.root.scrollIntoView({ block: "center" });
	if (answer && !card.composer.hidden) card.input.focus();
}

/** Shows the archived rows (the toolbar's toggle) and waits for the card of one of them. */
async function showArchived(board, id) {
	const archived = $("archived");
	if (archived.getAttribute("aria-pressed") !== "true") archived.click();
	for (let tries = 0; tries < 50; tries++) {
		board.expose(id);
		if (board.card(id)) return;
		await new Promise((r) => setTimeout(r, 100));
	}
}

/** A search hit's card: shown (archived rows too, by showing the archived), opened and scrolled to. */
async function openHit(board, hit) {
	if (!board.card(hit.rowId) && hit.archived) await showArchived(board, hit.rowId);
	await reveal(board, hit.rowId);
}

async function main() {
	whenLoggedOut(showLoggedOut);
	let info;
	try {
		info = await session();
	} catch {
		return showLoggedOut();
	}
	setSkew(info.now - Date.now());
	$("listen").textContent = info.listen;
	if (info.exposure) fill($("exposure"), [el("p", { text: info.exposure })]).hidden = false;
	const sheet = new Sheet(document.body);
	const ctx = {
		states: info.states,
		toast,
		expanded: new Set(),
		openCompare: (id) => void openCompare(sheet, id, info.states, toast).catch((e) => toast(e.message, "error")),
		openMerge: (id) => void openMerge(sheet, id, toast).catch((e) => toast(e.message, "error")),
		openTool: (name, row) => openTool(sheet, name, row, toast),
	};
	const board = new BoardView($("board"), info.groups, ctx);
	toolbarTools($("toolbar"), sheet, toast, (id) => void reveal(board, id).catch((e) => toast(e.message, "error")));
	$("new").addEventListener("click", () => void openDispatch(sheet, toast).catch((e) => toast(e.message, "error")));
	$("filter").addEventListener("input", (event) =>
		board.setFilter(/** @type {HTMLInputElement} */ (event.target).value),
	);

	searchBox(/** @type {HTMLInputElement} */ ($("search")), $("search-results"), (hit) => void openHit(board, hit));
	const archived = $("archived");
	archived.addEventListener("click", async () => {
		const show = archived.getAttribute("aria-pressed") !== "true";
		archived.setAttribute("aria-pressed", String(show));
		board.setArchived(show, show ? (await getJson("/api/rows?archived=1")).rows : []);
	});
	const bell = $("notify");
	const bellText = () => (bell.textContent = notificationsOn() ? "Notifying" : "Notify me");
	bell.hidden = !notificationsSupported();
	bellText();
	bell.addEventListener("click", async () => {
		if (!(await enableNotifications()))
			toast("Notifications are blocked for this page in the browser's settings.", "error");
		bellText();
	});
	connect(board);
	setInterval(() => tickAges(document.body), 1000);
}

void main();
