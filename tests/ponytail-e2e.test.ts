import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
	allSystemText,
	createTestAgent,
	type FauxCall,
	REPO_ROOT,
	runPi,
	systemMessages,
	type TestAgent,
	userTexts,
} from "../test-support/pi-harness.ts";

const LEVELS = ["lite", "full", "ultra"] as const;
let agent: TestAgent | undefined;
afterEach(() => {
	agent?.cleanup();
	agent = undefined;
});

function fresh(env: NodeJS.ProcessEnv = {}): TestAgent {
	agent = createTestAgent({ env });
	return agent;
}

/** Runs pi once in json print mode on a session file with the given messages (commands or prompts). */
async function run(
	a: TestAgent,
	messages: string[],
	extra: { env?: NodeJS.ProcessEnv; args?: string[]; session?: string } = {},
) {
	const session = extra.session ?? join(a.root, "session.jsonl");
	const result = await runPi(a, {
		args: ["--mode", "json", "-p", "--session", session, ...(extra.args ?? []), "--", ...messages],
		env: extra.env,
	});
	expect(result.code, result.stderr).toBe(0);
	return result;
}

/** The level the model was told in the last system message carrying a ponytail section, or "none". */
function injectedLevel(call: FauxCall): string {
	// A patch that removes a section carries it as null.
	const sections = systemMessages(call)
		.filter((message) => message.sections && "ponytail" in message.sections)
		.map((message) => message.sections?.ponytail);
	const last = sections.at(-1);
	if (typeof last !== "string" || last === "") return "none";
	return /level: (\w+)/.exec(last)?.[1] ?? "unknown";
}

function expectOnlyLevel(call: FauxCall, level: (typeof LEVELS)[number]): void {
	const text = allSystemText(call);
	expect(text).toContain(`PONYTAIL MODE ACTIVE - level: ${level}`);
	expect(text).toContain(`| **${level}** |`);
	expect(text).toMatch(new RegExp(`^- ${level}:`, "m"));
	for (const other of LEVELS.filter((l) => l !== level)) {
		expect(text).not.toContain(`| **${other}** |`);
		expect(text).not.toMatch(new RegExp(`^- ${other}:`, "m"));
	}
}

describe("/ponytail in real pi", () => {
	it("/ponytail ultra then a prompt: the model gets only the ultra rules; the mode survives a second run; commands are logged, prompts are not", async () => {
		const a = fresh();
		const first = await run(a, ["/ponytail ultra", "first prompt"]);
		expect(first.stderr).toContain("ponytail: ultra");
		await run(a, ["second prompt"]);
		const calls = a.calls();
		expect(calls.map((c) => userTexts(c).at(-1))).toEqual(["first prompt", "second prompt"]);
		for (const call of calls) {
			expect(injectedLevel(call)).toBe("ultra");
			expectOnlyLevel(call, "ultra");
		}
		const log = readFileSync(join(a.home, ".cache/ponytail/commands.log"), "utf8");
		const lines = log
			.split("\n")
			.filter(Boolean)
			.map((line) => JSON.parse(line) as { command: string; args: string; timestamp: string });
		expect(lines).toHaveLength(1);
		expect(lines[0]).toMatchObject({ command: "ponytail", args: "ultra" });
		expect(Number.isNaN(Date.parse(lines[0]?.timestamp ?? ""))).toBe(false);
		expect(log).not.toContain("prompt");

		// A run holding only the command (`pi -p --session f "/ponytail lite"`) also persists on an existing session.
		await run(a, ["/ponytail lite"]);
		expect(a.calls()).toHaveLength(2);
		await run(a, ["third prompt"]);
		expect(injectedLevel(a.calls()[2]!)).toBe("lite");
	});

	it("off injects nothing and stays off on resume; the default (full) is injected before", async () => {
		const a = fresh({ PONYTAIL_COMMAND_LOG: "0" });
		await run(a, ["before"]);
		await run(a, ["/ponytail off", "during"]);
		await run(a, ["after"]);
		const calls = a.calls();
		expect(calls.map(injectedLevel)).toEqual(["full", "none", "none"]);
		// A session that is off from its first prompt never carries the rules at all.
		await run(a, ["/ponytail off", "fresh"], { session: join(a.root, "fresh.jsonl") });
		const freshCall = a.calls().at(-1)!;
		expect(userTexts(freshCall)).toEqual(["fresh"]);
		expect(allSystemText(freshCall)).not.toContain("PONYTAIL");
		expect(allSystemText(freshCall)).toContain("<tools>");
		expect(existsSync(join(a.home, ".cache/ponytail/commands.log"))).toBe(false);
	});

	it("a mode change mid-session keeps the leading system message byte-identical and appends a patch", async () => {
		const a = fresh();
		await run(a, ["one"]);
		await run(a, ["/ponytail lite", "two"]);
		const [one, two] = a.calls();
		const leadOne = systemMessages(one!)[0];
		const systemTwo = systemMessages(two!);
		expect(leadOne?.sections?.ponytail).toContain("level: full");
		expect(JSON.stringify(systemTwo[0])).toBe(JSON.stringify(leadOne));
		expect(two!.messages.indexOf(systemTwo[0]!)).toBe(0);
		const patch = systemTwo.at(-1);
		expect(systemTwo.length).toBeGreaterThan(1);
		expect(Object.keys(patch?.sections ?? {})).toEqual(["ponytail"]);
		expect(patch?.sections?.ponytail).toContain("level: lite");
		expect(injectedLevel(two!)).toBe("lite");
	});

	it("PONYTAIL_DEFAULT_MODE sets the default; /ponytail alone turns the default on", async () => {
		const a = fresh({ PONYTAIL_DEFAULT_MODE: "lite" });
		await run(a, ["hello"]);
		await run(a, ["/ponytail off", "/ponytail", "again"]);
		const calls = a.calls();
		expect(calls.map(injectedLevel)).toEqual(["lite", "lite"]);
		expectOnlyLevel(calls[0]!, "lite");
	});

	it("a whole-message deactivation phrase turns ponytail off; a sentence containing one does not", async () => {
		const a = fresh();
		await run(a, ["add a normal mode toggle"]);
		const off = await run(a, ["Stop Ponytail!"]);
		expect(off.stderr).toContain("ponytail: off");
		await run(a, ["and now?"]);
		expect(a.calls().map(injectedLevel)).toEqual(["full", "none", "none"]);
	});

	it("a broken user config warns once, naming the file, and falls back to full", async () => {
		const a = fresh();
		const file = join(a.home, ".config/ponytail/config.json");
		mkdirSync(join(a.home, ".config/ponytail"), { recursive: true });
		writeFileSync(file, "{ defaultMode: ultra");
		const result = await run(a, ["/ponytail status", "hi"]);
		const warnings = result.stderr.split("\n").filter((line) => line.includes(file));
		expect(warnings).toHaveLength(1);
		expect(warnings[0]).toContain("not valid JSON");
		expect(result.stderr).toContain("default full (from built-in)");
		expect(a.calls().map(injectedLevel)).toEqual(["full"]);
	});

	it("/ponytail default writes the user config keeping other keys; a BOM is tolerated; an unknown argument changes nothing", async () => {
		const a = fresh();
		const file = join(a.home, ".config/ponytail/config.json");
		mkdirSync(join(a.home, ".config/ponytail"), { recursive: true });
		writeFileSync(file, `\uFEFF${JSON.stringify({ statusBar: false, note: "keep me" })}`);
		const result = await run(a, ["/ponytail bogus", "/ponytail default ultra", "hi"]);
		expect(result.stderr).toContain('unknown argument "bogus". Valid: off, lite, full, ultra, status, default');
		expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
			statusBar: false,
			note: "keep me",
			defaultMode: "ultra",
		});
		// The running session keeps its mode; the new default applies to the next session.
		expect(a.calls().map(injectedLevel)).toEqual(["full"]);
		await run(a, ["new session"], { session: join(a.root, "other.jsonl") });
		expect(injectedLevel(a.calls().at(-1)!)).toBe("ultra");
		const log = await run(a, ["/ponytail log 2"], { session: join(a.root, "other.jsonl") });
		expect(log.stderr).toMatch(/\/ponytail bogus\n.*\/ponytail default ultra\n/);
	});

	it("the project config applies only when the project is trusted", async () => {
		const a = fresh();
		mkdirSync(join(a.cwd, ".pi"), { recursive: true });
		writeFileSync(join(a.cwd, ".pi/ponytail.json"), JSON.stringify({ defaultMode: "ultra" }));
		await run(a, ["untrusted"], { session: join(a.root, "a.jsonl"), args: ["--no-approve"] });
		await run(a, ["trusted"], { session: join(a.root, "b.jsonl"), args: ["--approve"] });
		expect(a.calls().map(injectedLevel)).toEqual(["full", "ultra"]);
	});

	it("/ponytail-review sends its skill with the arguments and applies review for that run only", async () => {
		const a = fresh();
		await run(a, ["/ponytail-review src/app.ts", "next"]);
		const [review, next] = a.calls();
		const text = userTexts(review!).at(-1) ?? "";
		expect(text.startsWith('<skill name="ponytail-review"')).toBe(true);
		expect(text).toContain("# Ponytail review");
		expect(text.endsWith("src/app.ts")).toBe(true);
		expect(injectedLevel(review!)).toBe("review");
		expect(injectedLevel(next!)).toBe("full");
	});

	it("the other skill commands reach the model with their SKILL.md", async () => {
		const a = fresh();
		await run(a, ["/ponytail-audit", "/ponytail-debt src", "/ponytail-gain", "/ponytail-help modes?"]);
		const texts = a.calls().map((call) => userTexts(call).at(-1) ?? "");
		expect(texts.map((t) => /^<skill name="([\w-]+)"/.exec(t)?.[1])).toEqual([
			"ponytail-audit",
			"ponytail-debt",
			"ponytail-gain",
			"ponytail-help",
		]);
		expect(texts[1]?.endsWith("\n\nsrc")).toBe(true);
		expect(texts[3]).toContain("# Ponytail help");
	});

	it("uses pi's own /skill: expansion when the package skills are loaded", async () => {
		const a = fresh();
		const copy = join(a.root, "installed-skills");
		cpSync(join(REPO_ROOT, "skills"), copy, { recursive: true });
		await run(a, ["/ponytail-gain last change"], { args: ["--skill", copy] });
		const text = userTexts(a.calls()[0]!).at(-1) ?? "";
		expect(text.startsWith(`<skill name="ponytail-gain" location="${join(copy, "ponytail-gain/SKILL.md")}">`)).toBe(
			true,
		);
		expect(text.endsWith("\n\nlast change")).toBe(true);
	});

	it("condensed worker rules: PONYTAIL_CONDENSED=1 injects the short ruleset of the env mode", async () => {
		const a = fresh({ PONYTAIL_CONDENSED: "1", PONYTAIL_DEFAULT_MODE: "ultra" });
		await run(a, ["work"]);
		const section = systemMessages(a.calls()[0]!)[0]?.sections?.ponytail ?? "";
		expect(section).toContain("level: ultra");
		expect(section).toContain("Telegraphic");
		expect(section).not.toContain("| **");
		expect(section.length).toBeLessThanOrEqual(900 + "<ponytail>\n\n</ponytail>".length);
	});
});

describe("/ponytail in plain print mode", () => {
	it("messages go to stderr and the answer to stdout", async () => {
		const a = fresh();
		const result = await runPi(a, {
			args: ["-p", "--no-session", "--", "/ponytail ultra", "/ponytail status", "hi"],
		});
		expect(result.code, result.stderr).toBe(0);
		expect(result.stdout.trim()).toBe("ok");
		expect(result.stderr).toContain("ponytail: current ultra, default full (from built-in)");
		expect(a.calls().map(injectedLevel)).toEqual(["ultra"]);
	});
});

describe("/ponytail in rpc mode", () => {
	it("notifies and sets the footer status through the rpc UI protocol, and injects the chosen mode", async () => {
		const a = fresh();
		const stdin = ["/ponytail lite", "hi"]
			.map((message) => `${JSON.stringify({ type: "prompt", message })}\n`)
			.join("");
		const result = await runPi(a, { args: ["--mode", "rpc", "--no-session"], stdin });
		expect(result.code, result.stderr).toBe(0);
		const ui = result.events.filter((event) => event.type === "extension_ui_request");
		expect(ui.some((event) => event.method === "notify" && event.message === "ponytail: lite")).toBe(true);
		const statuses = ui
			.filter((event) => event.method === "setStatus" && event.statusKey === "ponytail")
			.map((event) => String(event.statusText));
		expect(statuses.some((text) => text.includes("ponytail") && text.includes("lite"))).toBe(true);
		expect(a.calls().map(injectedLevel)).toEqual(["lite"]);
	});
});
