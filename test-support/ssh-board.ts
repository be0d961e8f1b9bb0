/**
 * A board on this machine with one ssh target, `h`: a real sshd on 127.0.0.1 logging into a fresh second
 * Unix user whose pi talks to a loopback scripted model, a repository to dispatch from, and the target
 * checked with --install (our files on the host), for tests of what goes wrong at a host.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import { initRepo } from "./git-repo.ts";
import { startModelServer, type ModelServer } from "./model-server.ts";
import { PI_CLI } from "./pi-harness.ts";
import { startSshHost, type SshHost } from "./sshd.ts";

export interface SshBoard {
	host: SshHost;
	model: ModelServer;
	/** The fixture's local dir: the store is <local>/store, the repository <local>/repo. */
	local: string;
	repo: string;
	board: BoardEngine;
	cleanup(): Promise<void>;
}

export async function startSshBoard(prefix: string): Promise<SshBoard> {
	const host = await startSshHost();
	const model = await startModelServer();
	host.user.writePiConfig({ models: model.modelsJson(), auth: model.authJson(), settings: model.settingsJson() });
	const local = mkdtempSync(join(tmpdir(), prefix));
	const repo = initRepo(join(local, "repo"), { "a.txt": "a\n" });
	const board = createBoardService({ storeDir: join(local, "store"), piCommand: [process.execPath, PI_CLI], env: process.env });
	await board.targets.add("h", { kind: "ssh", host: host.alias, sshConfig: host.configFile });
	const check = await board.targets.check("h", { install: true });
	if (!check.ok) throw new Error(`targets check h: ${JSON.stringify(check.items.filter((item) => !item.ok))}`);
	return {
		host,
		model,
		local,
		repo,
		board,
		async cleanup() {
			await host.cleanup();
			await model.close();
			rmSync(local, { recursive: true, force: true });
		},
	};
}
