/** The targets subcommand's usage lines (light: pi's start-up registers the command with them); each kind's add line is its own. */
import { addUsages } from "../../../runner/kinds/kinds.mjs";

export function targetsUsage(): string {
	return [
		"targets                                   the targets, their limits, what runs and waits there",
		...addUsages(),
		"targets check <name> [--install]          each requirement: ok, or what is wrong and how to fix it",
		"targets remove <name>                     (refused while rows run or wait there)",
	].join("\n");
}
