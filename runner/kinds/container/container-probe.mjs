// Runs inside a one-shot container of the target's image and network (`targets check`): which node,
// pi, bash and git the image has, and whether the model provider's URL answers from there. Prints one
// JSON line. Plain syntax and node:* only: an image with an old node must still get its answer.
// Usage (inside): node container-probe.mjs [<baseUrl>]
import { execFileSync } from "node:child_process";
import * as http from "node:http";
import * as https from "node:https";

/** @param {string} command @param {string[]} args @param {"first" | "last"} [line] */
function version(command, args, line = "last") {
	try {
		const out = execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 30000 });
		const lines = out.trim().split("\n").filter(Boolean);
		return { version: (line === "first" ? lines[0] : lines.pop()) || "" };
	} catch (error) {
		const e = /** @type {{ code?: string, stderr?: unknown, message?: string }} */ (error);
		if (e.code === "ENOENT") return { error: "not found on the image's PATH" };
		return {
			error:
				String(e.stderr || "")
					.trim()
					.split("\n")
					.pop() ||
				e.message ||
				String(error),
		};
	}
}

/**
 * Any HTTP answer (401, 404 included) means the provider is reachable; only a failure to connect
 * (or no answer within 8 s) does not.
 * @param {string} url @returns {Promise<{ reachable: boolean, detail: string }>}
 */
function reach(url) {
	return new Promise((resolve) => {
		let parsed;
		try {
			parsed = new URL(url);
		} catch {
			return resolve({ reachable: false, detail: `not a URL: ${url}` });
		}
		const get = parsed.protocol === "https:" ? https.get : http.get;
		const request = get(parsed, { timeout: 8000 }, (response) => {
			response.resume();
			resolve({ reachable: true, detail: `HTTP ${response.statusCode}` });
		});
		request.on("timeout", () => request.destroy(new Error("no answer within 8 s")));
		request.on("error", (error) => {
			const code = /** @type {NodeJS.ErrnoException} */ (error).code;
			resolve({ reachable: false, detail: code ? `${code} (${error.message})` : error.message });
		});
	});
}

const baseUrl = process.argv[2];
const report = {
	node: process.version,
	pi: version("pi", ["--version"]),
	bash: version("bash", ["--version"], "first"),
	git: version("git", ["--version"]),
	network: baseUrl ? await reach(baseUrl) : undefined,
};
if (report.bash.version) report.bash.version = report.bash.version.replace(/^.*?version\s+([0-9][^\s(]*).*$/, "$1");
if (report.git.version) report.git.version = report.git.version.replace(/^git version /, "");
process.stdout.write(`${JSON.stringify(report)}\n`);
