/** `/agent-board <name> --help`: the subcommand's line from the table, and for targets each kind's add line. */
import { targetsUsage } from "./targets-usage.ts";
import { ID_NOTE, spec, USAGE } from "./usage.ts";

export function subcommandHelp(name: string): string {
	const s = spec(name);
	if (!s) return USAGE;
	const more =
		name === "targets"
			? targetsUsage()
					.split("\n")
					.map((line) => `  /agent-board ${line}`)
			: [];
	return [`usage: /agent-board ${s.usage}`, s.what, ...more, ...("takesRow" in s && s.takesRow ? [ID_NOTE] : [])].join(
		"\n",
	);
}
