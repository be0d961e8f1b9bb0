/** The page's files, read once at start from page/ (a fixed list: no path from a request reaches the disk). */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const PAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "page");

/** Modules the page shares with the board, served from where they live once (runner/, importing nothing). */
const SHARED_FILES: Record<string, string> = {
	"time-words.mjs": join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "runner", "time-words.mjs"),
	"row-filter.mjs": join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "runner", "row-filter.mjs"),
};

const TYPES: Record<string, string> = {
	".html": "text/html; charset=utf-8",
	".js": "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
	".webmanifest": "application/manifest+json",
};

/** Every file the page is made of. */
export const PAGE_FILES = [
	"index.html",
	"app.js",
	"board-view.js",
	"row-card.js",
	"panels.js",
	"row-more.js",
	"row-tools.js",
	"attempt-tools.js",
	"page-tools.js",
	"report-view.js",
	"dom.js",
	"api.js",
	"notices.js",
	"search.js",
	"sw.js",
	"style.css",
	"icon.svg",
	"manifest.webmanifest",
];

export interface StaticFile {
	body: Buffer;
	type: string;
}

export function loadPage(dir: string = PAGE_DIR): Map<string, StaticFile> {
	const files = new Map<string, StaticFile>();
	for (const name of PAGE_FILES) {
		const ext = name.slice(name.lastIndexOf("."));
		files.set(`/${name}`, { body: readFileSync(join(dir, name)), type: TYPES[ext] ?? "application/octet-stream" });
	}
	for (const [name, path] of Object.entries(SHARED_FILES))
		files.set(`/${name}`, { body: readFileSync(path), type: TYPES[".js"] ?? "text/javascript" });
	const index = files.get("/index.html");
	if (index) files.set("/", index);
	// Browsers ask for /favicon.ico whatever the page declares.
	const icon = files.get("/icon.svg");
	if (icon) files.set("/favicon.ico", icon);
	return files;
}
