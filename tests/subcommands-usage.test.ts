/** The subcommand table is the one source: the README's block, the command description and every usage text come from it. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { subcommandHelp } from "../src/board/subcommands/help.ts";
import { COMMAND_DESCRIPTION, readmeBlock, SUBCOMMAND_TABLE, USAGE } from "../src/board/subcommands/usage.ts";
import { REPO_ROOT } from "../test-support/pi-harness.ts";

const START =
	"<!-- subcommands: generated from src/board/subcommands/usage.ts (npm run readme-usage); a test fails on drift -->";

describe("the subcommand table", () => {
	it("is what the README shows, byte for byte", () => {
		const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
		const at = readme.indexOf(START);
		expect(at, "README marker").toBeGreaterThan(0);
		const block = /```\n([\s\S]*?)\n```/.exec(readme.slice(at))?.[1];
		expect(block).toBe(readmeBlock());
	});

	it("names every subcommand in the description, the usage and its own --help", () => {
		for (const spec of SUBCOMMAND_TABLE) {
			expect(COMMAND_DESCRIPTION).toContain(spec.name);
			expect(USAGE).toContain(`/agent-board ${spec.usage}`);
			expect(subcommandHelp(spec.name)).toContain(`usage: /agent-board ${spec.usage}\n${spec.what}`);
		}
	});
});
