// node:sqlite, loaded without its ExperimentalWarning: the warning would reach the person's terminal (pi's,
// the subcommand's) through node's default handler. Only that one warning is dropped, and only while the
// module loads (node emits it once, on first load); every other warning goes on as before.

/** @type {Promise<typeof import("node:sqlite")> | undefined} */
let loading;

/** @returns {Promise<typeof import("node:sqlite")>} */
export function loadSqlite() {
	loading ??= (async () => {
		const original = process.emitWarning;
		/** @type {(warning: string | Error, ...rest: unknown[]) => void} */
		const filtered = (warning, ...rest) => {
			const first = rest[0];
			const type = typeof first === "string" ? first : /** @type {{ type?: unknown } | undefined} */ (first)?.type;
			const text = typeof warning === "string" ? warning : warning?.message;
			if (type === "ExperimentalWarning" && /sqlite/i.test(String(text))) return;
			return Reflect.apply(original, process, [warning, ...rest]);
		};
		process.emitWarning = /** @type {typeof process.emitWarning} */ (filtered);
		try {
			return await import("node:sqlite");
		} finally {
			if (process.emitWarning === filtered) process.emitWarning = original;
		}
	})();
	return loading;
}
