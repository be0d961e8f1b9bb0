/**
 * `/agent-board notify`: the store's notifiers (runner/notify/notifiers.mjs). add, list, test, remove;
 * a URL is only ever shown masked. Parsing is pure; running reads and writes notifiers.json and, for
 * `test`, posts one message at once. What it does is runner/notify/notify-actions.mjs, which `S` calls too.
 */
import {
	addNotifierFrom,
	notifierLine,
	removeNotifierNamed,
	testNotifier,
} from "../../../runner/notify/notify-actions.mjs";
import { EVENTS, FORMATS, maskUrl, readNotifiers } from "../../../runner/notify/notifiers.mjs";

export type NotifyAction =
	| { verb: "list" }
	| { verb: "add"; name: string; url: string; format?: string; on?: string }
	| { verb: "test"; name: string }
	| { verb: "remove"; name: string };

export function parseNotifyArgs(rest: string): { ok: true; notify: NotifyAction } | { ok: false; error: string } {
	const words = rest.split(/\s+/).filter(Boolean);
	const [verb = "list", ...args] = words;
	if (verb === "list")
		return args.length === 0
			? { ok: true, notify: { verb } }
			: { ok: false, error: "notify list takes no arguments" };
	if (verb === "test" || verb === "remove") {
		const [name, ...more] = args;
		if (!name || more.length > 0) return { ok: false, error: `notify ${verb} takes a notifier's name` };
		return { ok: true, notify: { verb, name } };
	}
	if (verb !== "add") return { ok: false, error: `unknown notify action "${verb}": add, list, test or remove` };
	const positional: string[] = [];
	let format: string | undefined;
	let on: string | undefined;
	for (let i = 0; i < args.length; i++) {
		const word = args[i] ?? "";
		if (word === "--format" || word === "--on") {
			const value = args[++i];
			if (value === undefined || value.startsWith("--")) return { ok: false, error: `${word} needs a value` };
			if (word === "--format") format = value;
			else on = value;
		} else if (word.startsWith("--")) return { ok: false, error: `unknown option ${word}` };
		else positional.push(word);
	}
	const [name, url, ...extra] = positional;
	if (!name || !url || extra.length > 0)
		return {
			ok: false,
			error: `notify add takes <name> <url> [--format ${FORMATS.join("|")}] [--on ${EVENTS.join(",")}]`,
		};
	return {
		ok: true,
		notify: { verb, name, url, ...(format !== undefined ? { format } : {}), ...(on !== undefined ? { on } : {}) },
	};
}

export async function runNotify(action: NotifyAction, storeDir: string, now = Date.now()): Promise<string> {
	if (action.verb === "list") {
		const list = readNotifiers(storeDir);
		if (list.length === 0)
			return "no notifiers (/agent-board notify add <name> <url> [--format ntfy|slack|discord|json])";
		return list.map(notifierLine).join("\n");
	}
	if (action.verb === "add") {
		const n = await addNotifierFrom(storeDir, action, now);
		return `notifier ${n.name} added: ${n.format} to ${maskUrl(n.url)} on ${n.on.join(",")}`;
	}
	if (action.verb === "remove") {
		await removeNotifierNamed(storeDir, action.name);
		return `notifier ${action.name} removed`;
	}
	return testNotifier(storeDir, action.name, now);
}
