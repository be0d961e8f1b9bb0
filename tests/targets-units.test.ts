import {
	chmodSync,
	cpSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { PassThrough } from "node:stream";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeFrame, MAX_FRAME_BYTES, parseFrame, readFrames, type Frame } from "../runner/far/frames.mjs";
import { checkHost, nodeVersionOk, piVersionOk } from "../runner/far/host-check.mjs";
import { packageVersion, shippedFiles } from "../runner/far/package-files.mjs";
import { makePrivateDir, pkgPresent, placePkg } from "../runner/far/far-place.mjs";
import {
	controlPathFor,
	gitRemote,
	parseSshHost,
	shellQuote,
	sshArgv,
	sshEnv,
	sshFailure,
} from "../runner/kinds/ssh/ssh-transport.mjs";
import { REPO_ROOT } from "../test-support/pi-harness.ts";

const temps: string[] = [];
const temp = (): string => {
	const dir = mkdtempSync(join(tmpdir(), "pab-tu-"));
	temps.push(dir);
	return dir;
};
afterEach(() => {
	for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("frames", () => {
	it("round-trip, split on \\n only, and drop anything of the wrong shape", async () => {
		const frames: Frame[] = [
			{ t: "event", seq: 3, line: '{"seq":3,"text":"a\u2028b"}' },
			{ t: "session", offset: 10, data: Buffer.from("x\ny").toString("base64"), reset: true },
			{ t: "git", head: "a".repeat(40), wip: "b".repeat(40) },
			{ t: "inbox", message: { id: "m1", kind: "message", text: "line1\nline2" } },
		];
		for (const frame of frames) expect(parseFrame(encodeFrame(frame).slice(0, -1))).toEqual(frame);
		for (const bad of [
			'{"t":"event","seq":-1,"line":""}',
			'{"t":"git","head":"zz","wip":"zz"}',
			'{"t":"session","offset":0,"data":"!!"}',
			'{"t":"nope"}',
			"[]",
			"not json",
			'{"t":"receipt","receipt":{}}',
		]) {
			expect(parseFrame(bad)).toBeUndefined();
		}
		const stream = new PassThrough();
		const seen: Frame[] = [];
		const bad: string[] = [];
		readFrames(stream, (frame) => seen.push(frame), { onBadLine: (line) => bad.push(line) });
		const text = frames.map(encodeFrame).join("");
		// Cut mid-line and mid-character: the splitter waits for the "\n".
		stream.write(text.slice(0, 7));
		stream.write(`${text.slice(7)}garbage\n`);
		stream.write("x".repeat(MAX_FRAME_BYTES + 10));
		stream.write(`\n${encodeFrame({ t: "done" })}`);
		stream.end();
		await new Promise((resolve) => setImmediate(resolve));
		expect(seen).toEqual([...frames, { t: "done" }]);
		expect(bad[0]).toBe("garbage");
		expect(bad).toContain("(line too long)");
	});
});

describe("ssh transport", () => {
	it("parses what ssh accepts and refuses what ssh would read as an option", () => {
		expect(parseSshHost("devbox")).toEqual({ destination: "devbox" });
		expect(parseSshHost("me@dev.example.com")).toEqual({ destination: "me@dev.example.com" });
		expect(parseSshHost("ssh://me@dev:2222")).toEqual({ destination: "me@dev", port: 2222 });
		expect(parseSshHost("ssh://[::1]:22/")).toEqual({ destination: "::1", port: 22 });
		expect(parseSshHost("ssh://box")).toEqual({ destination: "box" });
		for (const bad of [
			"",
			"-oProxyCommand=touch /tmp/x",
			"a b",
			"box;rm -rf ~",
			"ssh://h:99999",
			"ssh://u@h/path/x",
			"box\n",
		]) {
			expect(() => parseSshHost(bad), bad).toThrow();
		}
	});

	it("builds BatchMode argv with one master per target, the destination after --, and the remote words quoted", () => {
		const target = { host: "ssh://me@dev:2222", sshConfig: "/cfg/ssh config", controlPath: "/store/targets/dev/cm" };
		const argv = sshArgv(target, ["node", "/d/pkg/v1/runner/far/host-agent.mjs", "follow", "/d/it's here", "3"]);
		expect(argv.slice(0, 4)).toEqual(["-F", "/cfg/ssh config", "-p", "2222"]);
		for (const option of [
			"BatchMode=yes",
			"ControlMaster=auto",
			"ControlPath=/store/targets/dev/cm",
			"ControlPersist=600",
		])
			expect(argv).toContain(option);
		expect(argv.slice(-3)).toEqual([
			"--",
			"me@dev",
			"node /d/pkg/v1/runner/far/host-agent.mjs follow '/d/it'\\''s here' 3",
		]);
		expect(shellQuote("$(reboot)")).toBe("'$(reboot)'");
		const git = gitRemote(target, "/d/repos/r.git");
		expect(git.url).toBe("ssh://me@dev:2222/d/repos/r.git");
		expect(git.env.GIT_SSH_COMMAND).toBe(
			"ssh -F '/cfg/ssh config' -o BatchMode=yes -o ControlMaster=auto -o ControlPath=/store/targets/dev/cm -o ControlPersist=600 -o ServerAliveInterval=5 -o ServerAliveCountMax=3 -o ConnectTimeout=15",
		);
		expect(sshEnv({ AGENT_BOARD_RUN_ID: "r1", PATH: "/bin" })).toEqual({ PATH: "/bin" });
	});

	it("keeps the control socket path short enough for a unix socket", () => {
		const short = temp();
		expect(controlPathFor(join(short, "targets/dev"))).toBe(join(short, "targets/dev/cm"));
		const long = join(short, "x".repeat(120), "targets/dev");
		const path = controlPathFor(long);
		expect(Buffer.byteLength(path)).toBeLessThanOrEqual(100);
		expect(controlPathFor(long)).toBe(path);
		expect(statSync(join(path, "..")).mode & 0o777).toBe(0o700);
	});

	it("turns ssh's stderr into a short reason with ssh's own words", () => {
		expect(sshFailure("ssh: connect to host 127.0.0.1 port 2299: Connection refused\r\n", 255)).toEqual({
			kind: "unreachable",
			reason: "unreachable (ssh: connect to host 127.0.0.1 port 2299: Connection refused)",
		});
		expect(sshFailure("me@box: Permission denied (publickey).\r\n", 255)?.kind).toBe("auth");
		expect(sshFailure("ssh: Could not resolve hostname nobox: Name or service not known\r\n", 255)?.reason).toContain(
			"Could not resolve hostname nobox",
		);
		const changed =
			"@@@@@@@@@@@\r\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\r\n@@@@@@@@@@@\r\nHost key for [127.0.0.1]:2299 has changed and you have requested strict checking.\r\nHost key verification failed.\r\n";
		expect(sshFailure(changed, 255)).toEqual({
			kind: "host-key-changed",
			reason:
				"host key changed (ssh: Host key for [127.0.0.1]:2299 has changed and you have requested strict checking.)",
		});
		expect(
			sshFailure(
				"No ED25519 host key is known for [h]:1 and you have requested strict checking.\r\nHost key verification failed.\r\n",
				255,
			)?.kind,
		).toBe("host-key-unknown");
		expect(sshFailure("\x1b]0;evil\x07weird\r\n", 255)?.reason).not.toMatch(/\x1b|\x07/);
		expect(sshFailure("bash: node: command not found\n", 127)).toBeUndefined();
	});
});

describe("package version and install script", () => {
	it("hashes exactly the shipped files, so an edit is a new version", () => {
		const root = temp();
		for (const dir of ["runner", "src", "skills"]) cpSync(join(REPO_ROOT, dir), join(root, dir), { recursive: true });
		cpSync(join(REPO_ROOT, "package.json"), join(root, "package.json"));
		mkdirSync(join(root, "tests"));
		writeFileSync(join(root, "tests/not-shipped.ts"), "x");
		const files = shippedFiles(root);
		expect(files).toContain("runner/far/host-agent.mjs");
		expect(files).toContain("src/index.ts");
		expect(files.some((file) => file.startsWith("tests/"))).toBe(false);
		const version = packageVersion(root);
		expect(version).toMatch(/^\d+\.\d+\.\d+-[0-9a-f]{12}$/);
		writeFileSync(join(root, "tests/not-shipped.ts"), "y");
		expect(packageVersion(root)).toBe(version);
		writeFileSync(join(root, "src/index.ts"), `${readFileSync(join(root, "src/index.ts"), "utf8")}\n`);
		expect(packageVersion(root)).not.toBe(version);
	});

	it("two installs of one version at once keep the one that landed first (two links on one host, or targets check --install meanwhile)", () => {
		const root = temp();
		const dir = join(root, "host");
		const final = join(dir, "pkg", "0.1.0-abc");
		// Both copies arrive before either is in place (far-place.mjs is what runs there, over ssh or in a station).
		const copies = ["a", "b"].map((name) => {
			const incoming = join(dir, "pkg", `.incoming-0.1.0-abc-${name}`);
			makePrivateDir(join(incoming, "runner"));
			writeFileSync(join(incoming, "runner", "host-agent.mjs"), `// ${name}\n`);
			return incoming;
		});
		expect(statSync(copies[0] ?? "").mode & 0o777).toBe(0o700);
		expect(pkgPresent(final)).toBe(false);
		// An install that died half way left an incomplete copy: it goes.
		makePrivateDir(join(final, "runner"));
		expect(placePkg(copies[0] ?? "", final)).toBe("installed");
		const landed = statSync(final).ino;
		expect(pkgPresent(final)).toBe(true);
		expect(placePkg(copies[1] ?? "", final)).toBe("present");
		// The install in use (host-agents start from it) was never removed or replaced.
		expect(statSync(final).ino).toBe(landed);
		expect(readFileSync(join(final, "runner", "host-agent.mjs"), "utf8")).toBe("// a\n");
		expect(readdirSync(final).sort()).toEqual([".complete", "runner"]);
		expect(readdirSync(join(dir, "pkg"))).toEqual(["0.1.0-abc"]);
	});
});

describe("host check", () => {
	it("reports each requirement with what was found", () => {
		expect([
			nodeVersionOk("v22.19.0"),
			nodeVersionOk("v22.18.9"),
			nodeVersionOk("v24.0.0"),
			nodeVersionOk("v20.19.1"),
		]).toEqual([true, false, true, false]);
		expect([piVersionOk("1.6.0"), piVersionOk("1.6"), piVersionOk("1.7.0"), piVersionOk("1.60.0")]).toEqual([
			true,
			true,
			false,
			false,
		]);
		const root = temp();
		const fakePi = join(root, "fake-pi");
		writeFileSync(fakePi, "#!/bin/sh\necho 1.5.2\n");
		chmodSync(fakePi, 0o755);
		mkdirSync(join(root, "dir/pkg/0.1.0-x"), { recursive: true });
		writeFileSync(join(root, "dir/pkg/0.1.0-x/.complete"), "");
		const report = checkHost(join(root, "dir"), { pi: [fakePi], pkgVersion: "0.1.0-x", minFreeBytes: 1 });
		expect(report.node.ok).toBe(true);
		expect(report.pi).toMatchObject({ ok: false, version: "1.5.2", need: "1.6.x" });
		expect(report.git.ok).toBe(true);
		expect(report.dir).toEqual({ path: join(root, "dir"), ok: true });
		expect(report.disk.ok).toBe(true);
		expect(report.pkg).toEqual({ version: "0.1.0-x", present: true });
		expect(report.ok).toBe(false);
		const missing = checkHost(join(root, "dir"), { pi: [join(root, "no-such-pi")], pkgVersion: "0.2.0-y" });
		expect(missing.pi.error).toBe("not found on PATH");
		expect(missing.pkg.present).toBe(false);
		// A dir that cannot be created (a file is in the way): not writable, with the reason.
		expect(checkHost(join(fakePi, "dir")).dir).toMatchObject({
			ok: false,
			error: expect.stringContaining("ENOTDIR"),
		});
	});
});
