/**
 * `/agent-board notify`: the store's notifiers (runner/notify/notifiers.mjs). add, list, test, remove;
 * a URL is only ever shown masked. Parsing is pure; running reads and writes notifiers.json and, for
 * `test`, posts one message at once (not through the outbox, so its outcome is the answer).
 */
import { randomBytes } from "node:crypto";
import { requestFor } from "../../../runner/notify/message.mjs";
import {
	addNotifier,
	EVENTS,
	FORMATS,
	makeNotifier,
	maskUrl,
	readNotifiers,
	removeNotifier,
} from "../../../runner/notify/notifiers.mjs";
import { post } from "../../../runner/notify/post.mjs";

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
		return list.map((n) => `${n.name}  ${n.format}  ${maskUrl(n.url)}  on ${n.on.join(",")}`).join("\n");
	}
	if (action.verb === "add") {
		const made = makeNotifier(action, now);
		if ("error" in made) throw new Error(made.error);
		await addNotifier(storeDir, made.notifier);
		const n = made.notifier;
		return `notifier ${n.name} added: ${n.format} to ${maskUrl(n.url)} on ${n.on.join(",")}`;
	}
	const notifier = readNotifiers(storeDir).find((n) => n.name === action.name);
	if (action.verb === "remove") {
		if (!(await removeNotifier(storeDir, action.name))) throw new Error(`no notifier named ${action.name}`);
		return `notifier ${action.name} removed`;
	}
	if (!notifier) throw new Error(`no notifier named ${action.name}`);
	const event = {
		id: randomBytes(16).toString("hex"),
		event: "test",
		rowId: "test",
		runId: "test",
		name: "agent-board",
		text: "A test message from agent-board: this notifier works.",
		at: now,
	};
	const outcome = await post(notifier.url, requestFor(notifier.format, event, undefined));
	const how = outcome.status ? `HTTP ${outcome.status}` : (outcome.error ?? "no answer");
	if (!outcome.ok) throw new Error(`test to ${notifier.name} (${maskUrl(notifier.url)}) not delivered: ${how}`);
	return `test to ${notifier.name} (${maskUrl(notifier.url)}): delivered (${how})`;
}
