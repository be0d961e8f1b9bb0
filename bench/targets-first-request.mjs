// Start of a run -> its first model request, through the far-side code of each target kind: local
// (host-agent prepare/start on this machine), ssh (the same over a warm master to a second Unix user
// via sshd on 127.0.0.1) and container (prepare + podman run of the offline worker image). Same
// loopback model, same extension, a git repository with one commit. Needs root, sshd and podman;
// missing parts are skipped. Run with --experimental-strip-types (bench/run-all.mjs does).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { containerRunArgs, containerStopArgs } from "../runner/kinds/container/container-argv.mjs";
import { callVerb, farPrepare, localTransport, sshMirrorRemote, sshTransport } from "../runner/link/far-client.mjs";
import { PACKAGE_ROOT, prepareRun } from "../runner/far/far-run.mjs";
import { pushBase, repoKey } from "../runner/link/git-travel.mjs";
import { ensureMirror } from "../runner/far/git-workspace.mjs";
import { makePiHome } from "../runner/kinds/container/pi-home.mjs";
import { installOverSsh, packageVersion } from "../runner/kinds/ssh/pkg-install.mjs";
import { controlPathFor } from "../runner/kinds/ssh/ssh-transport.mjs";
import { git, initRepo } from "../test-support/git-repo.ts";
import { startModelServer } from "../test-support/model-server.ts";
import { PI_CLI } from "../test-support/pi-harness.ts";
import { podmanMissing, sshdMissing } from "../test-support/requires.ts";
import { startSshHost } from "../test-support/sshd.ts";
import { ensureWorkerImage } from "../test-support/worker-image.ts";
import { load, spread } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const root = mkdtempSync(join(tmpdir(), "pab-bench-targets-"));
const model = await startModelServer({ script: { rules: [], fallback: [{ text: "ok" }] } });
const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
const base = git(repo, "rev-parse", "HEAD");
const key = repoKey(repo);
const agentDir = join(root, "agent");
mkdirSync(agentDir);
writeFileSync(join(agentDir, "models.json"), JSON.stringify(model.modelsJson()));
writeFileSync(join(agentDir, "auth.json"), JSON.stringify(model.authJson()));
writeFileSync(join(agentDir, "settings.json"), JSON.stringify(model.settingsJson()));
const offline = { PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" };
let n = 0;

/** @param {(prompt: string, rowId: string) => Promise<void>} start */
async function measure(start) {
	/** @type {number[]} */
	const times = [];
	for (let i = 0; i < RUNS; i++) {
		n += 1;
		const prompt = `BENCH-${n}`;
		const t0 = Date.now();
		await start(prompt, `b${n}`);
		const request = await model.waitForRequest((r) => r.prompt === prompt, prompt, 60_000);
		times.push(request.at - t0);
	}
	return times;
}

try {
	const localDir = join(root, "local-target");
	const local = await measure(async (prompt, rowId) => {
		ensureMirror(join(localDir, "repos", `${key}.git`));
		pushBase({ repo, remote: { url: join(localDir, "repos", `${key}.git`) }, rowId, commit: base });
		const env = { ...offline, PI_CODING_AGENT_DIR: agentDir };
		const prepared = await farPrepare(localTransport(), localDir, { rowId, runId: `${rowId}-r`, repoKey: key, base, prompt, env, piCommand: [process.execPath, PI_CLI], createdAt: Date.now() }, join(root, "none.jsonl"));
		await callVerb(localTransport(), "start", [String(prepared.runDir)]);
	}).catch((error) => {
		throw new Error(`local: ${error.message}`);
	});
	console.log(`local     (host-agent prepare + start, git push to a local mirror): ${spread(local)}`);

	const sshMissing = sshdMissing();
	if (sshMissing) console.log(`ssh: skipped (${sshMissing})`);
	else {
		const host = await startSshHost();
		try {
			host.user.writePiConfig({ models: model.modelsJson(), auth: model.authJson(), settings: model.settingsJson() });
			const target = { host: host.alias, sshConfig: host.configFile, controlPath: controlPathFor(join(root, "targets/ssh")), dir: join(host.user.home, ".agent-board"), pkgVersion: packageVersion() };
			await installOverSsh(target, target.dir);
			const ssh = await measure(async (prompt, rowId) => {
				pushBase({ repo, remote: sshMirrorRemote(target, key), rowId, commit: base });
				const prepared = await farPrepare(sshTransport(target), target.dir, { rowId, runId: `${rowId}-r`, repoKey: key, base, prompt, env: {}, createdAt: Date.now() }, join(root, "none.jsonl"));
				await callVerb(sshTransport(target), "start", [String(prepared.runDir)]);
			});
			console.log(`ssh       (git push + prepare + start over the warm master):        ${spread(ssh)}`);
		} finally {
			await host.cleanup();
		}
	}

	const ctrMissing = podmanMissing();
	if (ctrMissing) console.log(`container: skipped (${ctrMissing})`);
	else {
		const image = await ensureWorkerImage();
		console.log(`container image: ${image.built ? `built in ${(image.buildMs / 1000).toFixed(1)} s` : "cached"} (${image.tag})`);
		const dir = join(root, "targets/ctr");
		/** @type {string[]} */
		const names = [];
		const container = await measure(async (prompt, rowId) => {
			const runId = `${rowId}-r`;
			const prepared = prepareRun(dir, { rowId, runId, repoKey: key, base, prompt, env: offline, createdAt: Date.now(), session: null }, { container: { source: repo } });
			const piHome = join(dir, "pi", runId);
			makePiHome({ agentDir, dest: piHome });
			const argv = containerRunArgs({ engine: "podman", image: image.tag, network: "host", env: [], storeDir: root, rowId, runId, mounts: { pkg: PACKAGE_ROOT, run: prepared.runDir, session: dirname(prepared.sessionFile), piHome, workspace: prepared.worktree, objects: prepared.objects }, uid: 0, gid: 0 });
			const started = spawnSync("podman", argv, { encoding: "utf8" });
			if (started.status !== 0) throw new Error(started.stderr);
			names.push(runId);
		});
		console.log(`container (prepare + pi home + podman run -d, hardened):          ${spread(container)}`);
		for (const runId of names) spawnSync("podman", containerStopArgs("podman", undefined, runId).remove, { stdio: "ignore" });
	}
	console.log(load());
} finally {
	await model.close();
	rmSync(root, { recursive: true, force: true });
}
