// What the page tells the user: toasts in the page for every answer and notice, and a system
// notification when a row needs input, fails or completes (the TUI's notices), once the user allowed
// it. Phones show notifications only through a service worker, so one is registered (sw.js; the
// Trusted Types policy lets exactly that URL through).

const policy = globalThis.trustedTypes?.createPolicy("agent-board", {
	createScriptURL: (url) => {
		if (url !== "/sw.js") throw new TypeError(`not a script of this page: ${url}`);
		return url;
	},
});

/** @type {ServiceWorkerRegistration | undefined} */
let registration;

export function notificationsSupported() {
	return "Notification" in globalThis && globalThis.isSecureContext;
}

export function notificationsOn() {
	return notificationsSupported() && Notification.permission === "granted";
}

async function register() {
	if (registration || !("serviceWorker" in navigator)) return registration;
	try {
		registration = await navigator.serviceWorker.register(policy ? policy.createScriptURL("/sw.js") : "/sw.js", {
			scope: "/",
		});
	} catch {
		registration = undefined;
	}
	return registration;
}

/** Asks for the browser's permission (must follow a tap); returns whether notifications are on. */
export async function enableNotifications() {
	if (!notificationsSupported()) return false;
	const permission = await Notification.requestPermission();
	if (permission === "granted") await register();
	return permission === "granted";
}

/** A system notification for a notice; the page's toast shows it either way. */
export async function notify(notice) {
	if (!notificationsOn()) return;
	const options = {
		body: notice.text,
		tag: `${notice.id}:${notice.state}`,
		icon: "/icon.svg",
		data: { id: notice.id },
	};
	const reg = await register();
	if (reg?.showNotification) return reg.showNotification(notice.title, options);
	new Notification(notice.title, options);
}

/** Toasts: the newest few, each gone after a while or on a tap. */
export function toaster(host) {
	return (text, kind = "info", onTap) => {
		const node = document.createElement("div");
		node.className = `toast ${kind}`;
		node.setAttribute("role", kind === "error" ? "alert" : "status");
		node.textContent = text.length > 160 ? `${text.slice(0, 159)}…` : text;
		node.addEventListener("click", () => {
			node.remove();
			onTap?.();
		});
		host.prepend(node);
		while (host.children.length > 3) host.lastElementChild?.remove();
		setTimeout(() => node.remove(), kind === "error" ? 12_000 : 8_000);
	};
}

if (notificationsOn()) void register();
