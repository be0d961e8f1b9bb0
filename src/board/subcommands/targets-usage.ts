/** The targets subcommand's usage lines (for --help and bad input: loaded with the runtime, not at pi's start-up); each kind's add line is its own. */
import { addUsages } from "../../../runner/kinds/kinds.mjs";

export function targetsUsage(): string {
	return [
		"targets                                   the targets, their limits, what runs and waits there",
		...addUsages(),
		"targets check <name> [--install]          each requirement: ok, or what is wrong and how to fix it",
		"targets remove <name>                     (refused while rows run or wait there)",
		"targets set <name> --max <n> ...          change a target's fields (add's flags), for its next placement",
		"targets drain <name>                      it takes nothing new (a pool places nothing there); its rows finish",
		"targets undrain <name>                    it takes runs again",
	].join("\n");
}
