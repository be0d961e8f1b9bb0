// Start of a run -> its first model request, through the far-side code of each target kind: local
// (the link's launch, host-agent run, over a local child: the tests' fake kind), ssh (the same launch
// over a warm master to a second Unix user via sshd on 127.0.0.1) and container (prepare + podman run
// of the offline worker image). Same loopback model, same extension, a git repository with one
// commit. Needs root, sshd and podman; missing parts are skipped. Run with
// --experimental-strip-types (bench/run-all.mjs does).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { containerRunArgs, containerStopArgs } from "../runner/kinds/container/container-argv.mjs";
import { prepareRun } from "../runner/far/far-run.mjs";
import { PACKAGE_ROOT } from "../runner/far/package-files.mjs";
import { repoKey } from "../runner/link/git-travel.mjs";
import { containerPlace } from "../runner/kinds/container/container-run.mjs";
import { makePiHome } from "../runner/kinds/container/pi-home.mjs";
import { sshDriver } from "../runner/kinds/ssh/driver-ssh.mjs";
import { installOverSsh } from "../runner/kinds/ssh/pkg-install.mjs";
import { sshOf } from "../runner/kinds/ssh/ssh-transport.mjs";
import { fakeKind } from "../test-support/fake-kind/fake-kind.mjs";
import { git, initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir } from "../test-support/model-server.ts";
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
const agentDir = writeAgentDir(model, join(root, "agent"));
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

/**
 * One run as a link launches it (the driver's whole launch: config, base by git, prepare, start,
 * follow); resolves once the far runner started. The follow stays open until `handles` are closed.
 * @param {import("../runner/link/driver.mjs").TargetDriver} driver @param {import("../runner/link/driver.mjs").TargetSnapshot} target
 * @param {string} prompt @param {string} rowId @param {Record<string, string>} env @param {{ close(): void }[]} handles
 */
function launch(driver, target, prompt, rowId, env, handles) {
	const runId = `${rowId}-r`;
	const config = { rowId, runId, repoKey: "", base, prompt, env, createdAt: Date.now(), session: null };
	const run = {
		target,
		storeDir: join(root, "store"),
		rowId,
		runId,
		runDir: join(root, "mirror", runId),
		sessionFile: join(root, "none.jsonl"),
		repo,
		worktree: repo,
		base,
		subdir: "",
		agentDir,
		forwarded: {},
		config,
	};
	return new Promise((resolve, reject) => {
		handles.push(
			driver.launch(run, {
				started: () => resolve(undefined),
				frame: () => undefined,
				close: (outcome) => reject(new Error(outcome.failure?.reason ?? "the launch ended")),
			}),
		);
	});
}

/** @type {{ close(): void }[]} */
const handles = [];
try {
	const local = {
		kind: "fake",
		name: "local",
		dir: join(root, "local-target"),
		pi: [process.execPath, PI_CLI],
		max: 8,
		env: [],
	};
	const localDriver = await fakeKind.driver(local, { storeDir: join(root, "store") });
	const localTimes = await measure((prompt, rowId) =>
		launch(localDriver, local, prompt, rowId, { ...offline, PI_CODING_AGENT_DIR: agentDir }, handles),
	).catch((error) => {
		throw new Error(`local: ${error.message}`);
	});
	console.log(`local     (the link's launch, host-agent run over a local child):  ${spread(localTimes)}`);

	const sshMissing = sshdMissing();
	if (sshMissing) console.log(`ssh: skipped (${sshMissing})`);
	else {
		const host = await startSshHost();
		try {
			host.user.writePiConfig({
				models: model.modelsJson(),
				auth: model.authJson(),
				settings: model.settingsJson(),
			});
			const target = {
				kind: "ssh",
				name: "ssh",
				host: host.alias,
				sshConfig: host.configFile,
				dir: join(host.user.home, ".agent-board"),
				max: 8,
				env: [],
			};
			await installOverSsh(sshOf(target, join(root, "store")), target.dir);
			const driver = sshDriver(target, { storeDir: join(root, "store") });
			const ssh = await measure((prompt, rowId) => launch(driver, target, prompt, rowId, {}, handles));
			console.log(`ssh       (the link's launch over the warm master, git push):      ${spread(ssh)}`);
		} finally {
			for (const handle of handles.splice(0)) handle.close();
			await host.cleanup();
		}
	}

	const ctrMissing = podmanMissing();
	if (ctrMissing) console.log(`container: skipped (${ctrMissing})`);
	else {
		const image = await ensureWorkerImage();
		console.log(
			`container image: ${image.built ? `built in ${(image.buildMs / 1000).toFixed(1)} s` : "cached"} (${image.tag})`,
		);
		const dir = join(root, "targets/ctr");
		/** @type {string[]} */
		const names = [];
		const container = await measure(async (prompt, rowId) => {
			const runId = `${rowId}-r`;
			const prepared = prepareRun(
				dir,
				{ rowId, runId, repoKey: key, base, prompt, env: offline, createdAt: Date.now(), session: null },
				{ clone: { source: repo }, inside: () => containerPlace(rowId) },
			);
			const piHome = join(dir, "pi", runId);
			makePiHome({ agentDir, dest: piHome });
			const argv = containerRunArgs({
				engine: "podman",
				image: image.tag,
				network: "host",
				env: [],
				storeDir: root,
				rowId,
				runId,
				mounts: {
					pkg: PACKAGE_ROOT,
					run: prepared.runDir,
					session: dirname(prepared.sessionFile),
					piHome,
					workspace: prepared.worktree,
					objects: prepared.objects,
				},
				uid: 0,
				gid: 0,
			});
			const started = spawnSync("podman", argv, { encoding: "utf8" });
			if (started.status !== 0) throw new Error(started.stderr);
			names.push(runId);
		});
		console.log(`container (prepare + pi home + podman run -d, hardened):          ${spread(container)}`);
		for (const runId of names)
			spawnSync("podman", containerStopArgs("podman", undefined, runId).remove, { stdio: "ignore" });
	}
	console.log(load());
} finally {
	for (const handle of handles) handle.close();
	await model.close();
	rmSync(root, { recursive: true, force: true });
}
