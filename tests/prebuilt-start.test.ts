/**
 * pi loads prebuilt/start.ts (package.json's pi.extensions): the start path built into one module by
 * scripts/build-start.mjs. It must be what the sources build to now, its lazy parts must stay lazy
 * (their `import()`s name the sources, which exist), and pi must be pointed at it.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { buildStart, PREBUILT } from "../scripts/build-start.mjs";

describe("prebuilt start module", () => {
	it("is the sources' current build (run `npm run build-start` after changing the start path)", async () => {
		expect(readFileSync(PREBUILT, "utf8") === (await buildStart()), "prebuilt/start.ts is stale").toBe(true);
	});

	it("loads the engine, dashboard and ritual from the sources, on first use", () => {
		const text = readFileSync(PREBUILT, "utf8");
		const lazy = [...text.matchAll(/\bimport\("([^"]+)"\)/g)].map((match) => match[1] ?? "");
		for (const source of ["../src/board/runtime.ts", "../src/board/worker-role.ts", "../src/ritual/turn.ts"]) {
			expect(lazy).toContain(source);
		}
		for (const specifier of lazy) expect(existsSync(resolve(dirname(PREBUILT), specifier)), specifier).toBe(true);
		// The engine's code is not in it.
		expect(text).not.toContain("// src/board/runtime.ts");
		expect(text).toContain("// src/board/tools.ts");
	});

	it("is what pi loads from the package", () => {
		const manifest = JSON.parse(readFileSync(join(dirname(PREBUILT), "..", "package.json"), "utf8"));
		expect(manifest.pi.extensions).toEqual(["./prebuilt/start.ts"]);
	});
});
