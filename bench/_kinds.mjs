// One board with a row place of every kind, for the benches that compare them (#36): this machine, an ssh
// target over loopback (sshd on 127.0.0.1, a second Unix user), a pool whose one member is that host, a
// container target on this machine's podman and one on a remote engine (podman's API service as a third
// Unix user behind its own sshd, test-support/remote-engine.ts). A kind whose prerequisite is missing is
// left out with its reason printed. The scripted model serves this machine's pi and the hosts'; the
// board's pi agent dir is also what a container run's pi home is made from.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir } from "../test-support/model-server.ts";
import { PI_CLI } from "../test-support/pi-harness.ts";
import { remoteEngineMissing, startRemotePodman } from "../test-support/remote-engine.ts";
import { podmanMissing, sshdMissing } from "../test-support/requires.ts";
import { startSshHost } from "../test-support/sshd.ts";
import { removeContainersOfStore } from "../test-support/target-helpers.ts";
import { ensureWorkerImage } from "../test-support/worker-image.ts";

/** @typedef {{ name: string, target: string | undefined }} Kind */

/**
 * @param {string} prefix the temp dir's prefix
 * @param {import("../test-support/model-server.ts").ModelServerOptions} [modelOptions]
 */
export async function startKinds(prefix, modelOptions) {
	const root = mkdtempSync(join(tmpdir(), prefix));
	/** @type {(() => Promise<void> | void)[]} */
	const cleanups = [() => rmSync(root, { recursive: true, force: true })];
	const cleanup = async () => {
		for (const step of cleanups.reverse()) await Promise.resolve(step()).catch(() => undefined);
	};
	try {
		const model = await startModelServer(modelOptions);
		cleanups.push(() => model.close());
		const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
		const agentDir = writeAgentDir(model, join(root, "agent"));
		// A container run's pi home is made from the board's pi agent dir.
		process.env.PI_CODING_AGENT_DIR = agentDir;
		const storeDir = join(root, "store");
		const board = createBoardService({
			storeDir,
			piCommand: [process.execPath, PI_CLI],
			maxConcurrent: 4,
			env: { ...process.env, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" },
		});
		/** @type {Kind[]} */
		const kinds = [{ name: "this machine", target: undefined }];
		/** @param {string} name */
		const checked = async (name, install = false) => {
			const check = await board.targets.check(name, { install });
			if (!check.ok) throw new Error(`targets check ${name}: ${JSON.stringify(check.items.filter((i) => !i.ok))}`);
		};

		const noSsh = sshdMissing();
		if (noSsh) console.log(`ssh target and pool member skipped: ${noSsh}`);
		else {
			const host = await startSshHost();
			cleanups.push(() => host.cleanup());
			host.user.writePiConfig({
				models: model.modelsJson(),
				auth: model.authJson(),
				settings: model.settingsJson(),
			});
			await board.targets.add("lo", { kind: "ssh", host: host.alias, sshConfig: host.configFile, max: 4 });
			await checked("lo", true);
			await board.targets.add("pool1", { kind: "pool", members: "lo" });
			kinds.push({ name: "ssh target", target: "lo" }, { name: "pool member (pool1/lo)", target: "pool1" });
		}

		const noPodman = podmanMissing();
		if (noPodman) console.log(`container targets skipped: ${noPodman}`);
		else {
			const image = (await ensureWorkerImage()).tag;
			await board.targets.add("ctr", { kind: "container", engine: "podman", image, network: "host", max: 4 });
			cleanups.push(() => removeContainersOfStore(storeDir));
			await checked("ctr");
			kinds.push({ name: "container (this machine's podman)", target: "ctr" });
		}

		const noEngine = noSsh ?? noPodman ?? remoteEngineMissing();
		if (noEngine) console.log(`remote engine skipped: ${noEngine}`);
		else {
			const engine = await startRemotePodman();
			cleanups.push(() => engine.cleanup());
			await board.targets.add("far", {
				kind: "container",
				engine: "podman",
				image: engine.image,
				engineHost: engine.url,
				engineIdentity: engine.identity,
				network: "host",
				max: 4,
			});
			await checked("far");
			kinds.push({ name: "remote engine (podman over ssh)", target: "far" });
		}
		return { root, model, repo, agentDir, board, kinds, cleanup };
	} catch (error) {
		await cleanup();
		throw error;
	}
}
