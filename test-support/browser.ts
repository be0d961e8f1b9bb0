/**
 * A real headless Chromium (Debian's `chromium`) driven through playwright-core, for the web page's
 * tests and bench: a fresh profile per launch, no network of its own beyond what the page asks for.
 * Screenshots go to test-artifacts/web/ (gitignored), kept after the run.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { REPO_ROOT } from "./pi-harness.ts";

export const CHROMIUM = process.env.AGENT_BOARD_CHROMIUM || "/usr/bin/chromium";
export const ARTIFACTS = join(REPO_ROOT, "test-artifacts", "web");

/** Why Chromium cannot run here, or undefined (requires() skips or fails on it). */
export function chromiumMissing(): string | undefined {
	return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (apt-get install chromium)`;
}

export interface Browser {
	context: BrowserContext;
	page: Page;
	/** Messages the page logged as errors and uncaught exceptions (a CSP or Trusted Types violation lands here). */
	errors: string[];
	close(): Promise<void>;
}

export async function launchBrowser(options: { width?: number; height?: number } = {}): Promise<Browser> {
	const profile = mkdtempSync(join(tmpdir(), "pab-chromium-"));
	const context = await chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		args: [
			"--no-sandbox",
			"--disable-gpu",
			"--disable-background-networking",
			"--disable-component-update",
			"--disable-sync",
			"--no-first-run",
		],
		viewport: { width: options.width ?? 360, height: options.height ?? 740 },
	});
	const page = context.pages()[0] ?? (await context.newPage());
	const errors: string[] = [];
	page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
	page.on("console", (message) => {
		if (message.type() === "error") errors.push(`console: ${message.text()}`);
	});
	return {
		context,
		page,
		errors,
		async close() {
			await context.close().catch(() => undefined);
			rmSync(profile, { recursive: true, force: true });
		},
	};
}

/** A screenshot kept as a test artifact (what the viewport shows, or the whole page); returns its path. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
	mkdirSync(ARTIFACTS, { recursive: true });
	const path = join(ARTIFACTS, `${name}.png`);
	await page.screenshot({ path, fullPage: options.fullPage === true });
	return path;
}

/**
 * Elements wider than the viewport or than their own box (text or controls cut off or scrolled
 * sideways). Browser code, given as text: this project's TypeScript has no DOM types.
 */
const OVERFLOWING = `(() => {
	const width = document.documentElement.clientWidth;
	const out = [];
	if (document.documentElement.scrollWidth > width) out.push("document scrolls sideways: " + document.documentElement.scrollWidth + " > " + width);
	for (const node of document.querySelectorAll("body *")) {
		if (["INPUT", "TEXTAREA", "SELECT", "OPTION"].includes(node.tagName)) continue;
		const style = getComputedStyle(node);
		if (node.offsetParent === null && style.position !== "fixed") continue;
		const box = node.getBoundingClientRect();
		if (box.width === 0 && box.height === 0) continue;
		const name = node.tagName.toLowerCase() + (node.className ? "." + String(node.className).split(" ").join(".") : "") + (node.textContent ? " (" + node.textContent.slice(0, 40) + ")" : "");
		if (box.right > width + 0.5 || box.left < -0.5) out.push(name + " spans " + Math.round(box.left) + ".." + Math.round(box.right) + " of " + width);
		else if (node.scrollWidth > node.clientWidth + 1 && style.overflowX !== "visible") out.push(name + " cuts its content: " + node.scrollWidth + " > " + node.clientWidth);
	}
	return out;
})()`;

export function overflowing(page: Page): Promise<string[]> {
	return page.evaluate(OVERFLOWING) as Promise<string[]>;
}
