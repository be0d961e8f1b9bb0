// The page's service worker: only what phones need to show a notification and bring the board back
// when one is tapped. It caches nothing: the board is live data behind a login.
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("notificationclick", (event) => {
	event.notification.close();
	event.waitUntil(
		self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
			const open = windows.find((client) => new URL(client.url).origin === self.location.origin);
			return open ? open.focus() : self.clients.openWindow("/");
		}),
	);
});
