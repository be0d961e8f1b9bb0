/** The targets subcommand's usage lines (light: pi's start-up registers the command with them). */
export const TARGETS_USAGE = [
	"targets                                   the targets, their limits, what runs and waits there",
	"targets add <name> --ssh <host> [--ssh-config <file>] [--dir <remote dir>] [--pi <command>] [--max <n>] [--env <NAME>]...",
	"targets add <name> --container docker|podman --image <image> [--network <mode>] [--max <n>] [--env <NAME>]... [--cpus <n>] [--memory <size>]",
	"targets check <name> [--install]          each requirement: ok, or what is wrong and how to fix it",
	"targets remove <name>                     (refused while rows run or wait there)",
].join("\n");
