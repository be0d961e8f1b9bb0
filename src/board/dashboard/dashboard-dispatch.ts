/** The dashboard's new-agent flow: open the form, then dispatch one row or an attempt set of N. */
import type { Dashboard } from "./dashboard.ts";
import { DispatchForm } from "./dispatch-form.ts";
import { message } from "../view-model/ui-types.ts";

export function openDispatch(d: Dashboard): void {
	d.back = d.mode;
	d.form = new DispatchForm(d.deps.tui, d.deps.theme, d.deps.keys, d.deps.models, d.deps.prefs, d.deps.prefs.cwd ?? d.deps.cwd);
	d.mode = "dispatch";
}

export function handleDispatch(d: Dashboard, data: string): void {
	const form = d.form;
	if (!form) return;
	const outcome = form.handleInput(data, d.deps.keys);
	if (outcome === "cancel") d.mode = d.back;
	if (outcome !== "submit") return;
	const options = form.options();
	Object.assign(d.deps.prefs, form.prefs());
	d.mode = "list";
	d.form = undefined;
	void d.deps.savePrefs(d.deps.prefs).catch(() => undefined);
	const what = options.name ?? options.prompt.split("\n")[0]?.slice(0, 40) ?? "";
	d.deps.service.dispatchAttempts(options).then(
		(rows) => {
			const first = rows[0];
			if (!first) return;
			// The cursor follows the new row; the feed gets it now rather than on the next report.
			d.pendingSelect = first.id;
			d.filter = "";
			d.status = rows.length > 1 ? `dispatched ${rows.length} attempts of ${what} (c compares them)` : `dispatched ${what}`;
			for (const row of rows) d.deps.feed.put(row);
		},
		(error: unknown) => d.setStatus(`dispatch failed: ${message(error)}`),
	);
}
