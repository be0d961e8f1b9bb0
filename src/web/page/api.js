// Talking to the board's server: JSON over fetch with the CSRF token on every change, and one
// EventSource for pushed rows. A 401 anywhere means this browser is logged out (a rotation, a new server).

let csrf = "";
/** @type {(() => void) | undefined} */
let onLoggedOut;

export class ApiError extends Error {
	constructor(status, message) {
		super(message);
		this.status = status;
	}
}

export function whenLoggedOut(handler) {
	onLoggedOut = handler;
}

async function answer(response) {
	if (response.status === 401) onLoggedOut?.();
	let body = {};
	try {
		body = await response.json();
	} catch {
		body = {};
	}
	if (!response.ok)
		throw new ApiError(response.status, typeof body.error === "string" ? body.error : `HTTP ${response.status}`);
	return body;
}

export async function getJson(path) {
	return answer(await fetch(path, { credentials: "same-origin", cache: "no-store" }));
}

export async function postJson(path, body = {}) {
	return answer(
		await fetch(path, {
			method: "POST",
			credentials: "same-origin",
			headers: { "content-type": "application/json", "x-csrf-token": csrf },
			body: JSON.stringify(body),
		}),
	);
}

/** Reads the session (the CSRF token and where the server listens). */
export async function session() {
	const value = await getJson("/api/session");
	csrf = value.csrf;
	return value;
}

/** Row actions, by name: reply, stop, archive, unarchive, viewed, merge. */
export function rowAction(id, action, body) {
	return postJson(`/api/rows/${encodeURIComponent(id)}/${action}`, body);
}

export function rowGet(id, what = "") {
	return getJson(`/api/rows/${encodeURIComponent(id)}${what ? `/${what}` : ""}`);
}
