// Building the page's DOM. Every string goes in as text (textContent, attribute values), never as
// markup: the server's CSP requires Trusted Types, so markup assigned by mistake would throw.

import { formatAge } from "./time-words.mjs";

/**
 * el("button", { class: "x", text: "Send", on: { click } , attrs: { type: "button" } }, [children])
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {{ class?: string, text?: string, title?: string, attrs?: Record<string, string>, on?: Record<string, (event: Event) => void> }} [props]
 * @param {(Node | string | null | undefined | false)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, props = {}, children = []) {
	const node = document.createElement(tag);
	if (props.class) node.className = props.class;
	if (props.text !== undefined) node.textContent = props.text;
	if (props.title) node.title = props.title;
	for (const [name, value] of Object.entries(props.attrs ?? {})) node.setAttribute(name, value);
	for (const [name, handler] of Object.entries(props.on ?? {})) node.addEventListener(name, handler);
	for (const child of children) {
		if (child === null || child === undefined || child === false) continue;
		node.append(typeof child === "string" ? document.createTextNode(child) : child);
	}
	return node;
}

/** Replaces a node's children. */
export function fill(node, children) {
	node.replaceChildren(...children.filter((child) => child !== null && child !== undefined && child !== false));
	return node;
}

/** The server's clock minus the page's: ages are told against the server's. */
let skew = 0;

export function setSkew(value) {
	skew = value;
}

/** A span whose text is the age of `at`, kept ticking by tickAges(). */
export function age(at, suffix = "") {
	const node = el("span", { class: "age", text: formatAge(Date.now() + skew - at) + suffix });
	node.dataset.at = String(at);
	node.dataset.suffix = suffix;
	return node;
}

/** Re-reads every ticking age under `root`. */
export function tickAges(root) {
	const now = Date.now() + skew;
	for (const node of root.querySelectorAll(".age[data-at]")) {
		const text = formatAge(now - Number(node.dataset.at)) + (node.dataset.suffix ?? "");
		if (node.textContent !== text) node.textContent = text;
	}
}

/** At most `max` characters, cut at the end with "…". */
export function clip(text, max) {
	return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

/** The newest `max` characters of a growing text, cut at its start with "…". */
export function tail(text, max) {
	return text.length <= max ? text : `…${text.slice(text.length - max + 1).trimStart()}`;
}
