/**
 * The notifiers in the board's settings (`S`), on the fake service with a real store directory, at a
 * width: add one through the form (the URL typed is shown masked, as `notify list` masks it), the list
 * showing it, a test sent for real to a loopback receiver, and remove after the question.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { maskUrl, readNotifiers } from "../runner/notify/notifiers.mjs";
import { ConfirmView } from "../src/board/dashboard/confirm-view.ts";
import { NotifyAddView } from "../src/board/dashboard/notify-settings.ts";
import { SettingsView } from "../src/board/dashboard/settings-view.ts";
import { runNotify } from "../src/board/subcommands/notify-command.ts";
import { harnessPerTest } from "../test-support/dashboard-harness.ts";
import { KEY } from "../test-support/fake-board-service.ts";

const harness = harnessPerTest();
const WIDTH = 160;
const cleanup: (() => void)[] = [];
afterEach(() => {
	for (const done of cleanup.splice(0)) done();
});

interface Received {
	path: string;
	body: string;
}

async function receiver(): Promise<{ server: Server; port: number; got: Received[] }> {
	const got: Received[] = [];
	const server = createServer((req: IncomingMessage, res) => {
		let body = "";
		req.on("data", (chunk: Buffer) => {
			body += chunk.toString("utf8");
		});
		req.on("end", () => {
			got.push({ path: req.url ?? "", body });
			res.writeHead(200).end("ok");
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	cleanup.push(() => server.close());
	return { server, port: (server.address() as AddressInfo).port, got };
}

async function until(check: () => boolean, what: string): Promise<void> {
	for (let i = 0; i < 500; i++) {
		if (check()) return;
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
	throw new Error(`never: ${what}`);
}

describe("notifiers in S", () => {
	it("adds one through the form, lists it with its URL masked, sends a test to a loopback receiver, removes it", async () => {
		const store = mkdtempSync(join(tmpdir(), "abn-"));
		cleanup.push(() => rmSync(store, { recursive: true, force: true }));
		const { port, got } = await receiver();
		const url = `http://127.0.0.1:${port}/hook/secret-topic?token=s3cr3t`;
		const h = await harness([], { storeDir: store });
		await h.press("S");
		expect(h.top()).toBeInstanceOf(SettingsView);
		// The cursor wraps from the first setting to the last: add (the list scrolls to it).
		await h.press(KEY.up);
		expect(h.screen(WIDTH)).toMatch(/→ notifiers: add one\s+enter/);
		await h.press(KEY.enter);
		expect(h.top()).toBeInstanceOf(NotifyAddView);
		await h.press(KEY.enter, ..."phone", KEY.enter);
		await h.press(KEY.down, KEY.enter, ...url);
		expect(h.screen(WIDTH)).toContain("secret-topic"); // being typed
		await h.press(KEY.enter);
		let screen = h.screen(WIDTH);
		expect(screen).toContain(maskUrl(url));
		expect(screen).not.toContain("secret-topic");
		await h.press(KEY.down, KEY.enter); // format: json -> ntfy
		expect(h.screen(WIDTH)).toMatch(/format\s+ntfy/);
		await h.press(KEY.down, KEY.enter, ..."\x7f".repeat(40), ..."needs-input,failed", KEY.enter);
		await h.press(KEY.down, KEY.enter);
		await until(() => h.top() instanceof SettingsView, "the form closed on add");
		expect(readNotifiers(store)).toEqual([
			expect.objectContaining({ name: "phone", url, format: "ntfy", on: ["needs-input", "failed"] }),
		]);
		screen = h.screen(WIDTH);
		expect(screen).toMatch(/notifier phone\s+ntfy to http:\/\/127\.0\.0\.1:\d+\/\*\*\* on needs-input,failed/);
		expect(screen).toContain("notifier phone added: ntfy to");
		expect(screen).not.toContain("secret-topic");
		expect(screen).not.toContain("s3cr3t");
		// The same masked URL as `notify list` prints.
		expect(await runNotify({ verb: "list" }, store)).toContain(maskUrl(url));

		// The cursor is on the new notifier: enter sends a test, for real, at once.
		await h.press(KEY.enter);
		await until(() => got.length === 1 && h.screen(WIDTH).includes("delivered"), "the test delivered");
		expect(got[0]?.path).toBe("/hook/secret-topic?token=s3cr3t");
		expect(got[0]?.body).toContain("A test message from agent-board");
		screen = h.screen(WIDTH);
		expect(screen).toContain(`test to phone (${maskUrl(url)}): delivered (HTTP 200)`);
		expect(screen).not.toContain("secret-topic");

		// Remove asks first; no leaves it, yes removes it.
		await h.press(KEY.down, KEY.enter);
		expect(h.top()).toBeInstanceOf(ConfirmView);
		expect(h.screen(WIDTH)).toContain("Remove the notifier phone?");
		await h.press("n");
		expect(readNotifiers(store)).toHaveLength(1);
		await h.press(KEY.enter, "y");
		await until(() => readNotifiers(store).length === 0, "the notifier removed");
		await until(() => h.screen(WIDTH).includes("notifier phone removed"), "the status says so");
		expect(h.top()).toBeInstanceOf(SettingsView);
		expect(h.screen(WIDTH)).not.toMatch(/notifier phone\s+ntfy/);
		expect(h.screen(WIDTH)).not.toContain("notifier phone: remove");
		expect(got).toHaveLength(1);
	});

	it("a test to a receiver that is down says so, with the URL masked", async () => {
		const store = mkdtempSync(join(tmpdir(), "abn-"));
		cleanup.push(() => rmSync(store, { recursive: true, force: true }));
		const { server, port } = await receiver();
		await new Promise((resolve) => server.close(resolve));
		const url = `http://127.0.0.1:${port}/down/secret-topic`;
		await runNotify({ verb: "add", name: "gone", url }, store);
		const h = await harness([], { storeDir: store });
		await h.press("S");
		// Last three: the notifier, its remove, add.
		await h.press(KEY.up, KEY.up, KEY.up);
		expect(h.screen(WIDTH)).toMatch(/→ notifier gone\s+json to http:\/\/127\.0\.0\.1:\d+\/\*\*\*/);
		await h.press(KEY.enter);
		await until(() => h.screen(WIDTH).includes("not delivered"), "the failure shown");
		const screen = h.screen(WIDTH);
		expect(screen).toContain(`test to gone (${maskUrl(url)}) not delivered`);
		expect(screen).not.toContain("secret-topic");
	});
});
