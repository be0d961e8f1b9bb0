// A self-contained program of runner/far/ (node:* imports only) run on an ssh host: its source and the
// call go to the host's node over ssh stdin, so it works whatever version of our files the host has
// (or none). The call's arguments travel in the program, never on a command line.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { sshArgv, sshEnv, sshFailure } from "./ssh-transport.mjs";

const FAR = resolve(dirname(fileURLToPath(import.meta.url)), "../../far");

/**
 * Runs `<fn>(...args)` of runner/far/<file> on the host and resolves with what it returned.
 * @param {import("./ssh-transport.mjs").SshTarget} target @param {string} file @param {string} fn @param {unknown[]} args
 * @returns {Promise<unknown>}
 */
export function runFarProgram(target, file, fn, args) {
	const source = readFileSync(join(FAR, file), "utf8");
	const program = `${source}\nprocess.stdout.write(JSON.stringify(await ${fn}(...${JSON.stringify(args)})));\n`;
	return new Promise((resolvePromise, reject) => {
		const child = spawn("ssh", sshArgv(target, ["node", "--input-type=module", "-"]), { stdio: ["pipe", "pipe", "pipe"], env: sshEnv() });
		let out = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (/** @type {string} */ c) => (out += c));
		child.stderr.setEncoding("utf8").on("data", (/** @type {string} */ c) => (stderr = (stderr + c).slice(-8000)));
		child.stdin.on("error", () => undefined);
		child.stdin.end(program);
		child.on("error", (error) => reject(error));
		child.on("close", (code) => {
			const failure = sshFailure(stderr, code);
			if (failure) return reject(new Error(failure.reason));
			const said = stderr.trim().split("\n").find((line) => /^\w*Error\b/.test(line.trim())) ?? stderr.trim().split("\n").pop() ?? "";
			if (code !== 0) return reject(new Error(`${file} on the host failed (exit ${code})${said ? `: ${said.trim()}` : ""}`));
			try {
				resolvePromise(JSON.parse(out));
			} catch {
				reject(new Error(`${file} on the host answered ${JSON.stringify(out.slice(0, 200))}`));
			}
		});
	});
}
