/**
 * A board on this machine with one ssh target, `h`: a real sshd on 127.0.0.1 logging into a fresh second
 * Unix user whose pi talks to a loopback scripted model, a repository to dispatch from, and (unless told
 * not to) the host's pi configured and the target checked with --install (our files on the host).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import { initRepo } from "./git-repo.ts";
import { startModelServer, type ModelServerOptions, type ModelServer } from "./model-server.ts";
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

export interface SshBoardOptions {
	model?: ModelServerOptions;
	/** The repository's files (default: a.txt). */
	files?: Record<string, string>;
	/** Added to the board's environment (a test's forwarded variables). */
	env?: (model: ModelServer) => Record<string, string>;
	/** The target's --env names. */
	targetEnv?: string[];
	/** A newcomer's host: its pi left unconfigured. */
	bare?: boolean;
	/** targets check --install in the fixture (default); false leaves it to the test. */
	check?: boolean;
}

export async function startSshBoard(prefix: string, options: SshBoardOptions = {}): Promise<SshBoard> {
	const host = await startSshHost();
	const model = await startModelServer(options.model);
	if (!options.bare)
		host.user.writePiConfig({ models: model.modelsJson(), auth: model.authJson(), settings: model.settingsJson() });
	const local = mkdtempSync(join(tmpdir(), prefix));
	const repo = initRepo(join(local, "repo"), options.files ?? { "a.txt": "a\n" });
	const board = createBoardService({
		storeDir: join(local, "store"),
		piCommand: [process.execPath, PI_CLI],
		env: { ...process.env, ...options.env?.(model) },
	});
	await board.targets.add("h", {
		kind: "ssh",
		host: host.alias,
		sshConfig: host.configFile,
		...(options.targetEnv ? { env: options.targetEnv } : {}),
	});
	if (options.check !== false) {
		const check = await board.targets.check("h", { install: true });
		if (!check.ok) throw new Error(`targets check h: ${JSON.stringify(check.items.filter((item) => !item.ok))}`);
	}
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
