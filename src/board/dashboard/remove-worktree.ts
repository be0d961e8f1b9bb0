/** Removing a row's worktree: git refuses one with changes, so the forced removal is a second, explicit step. */
import type { BoardRow } from "../engine/types.ts";
import { message } from "../view-model/ui-types.ts";
import { ConfirmView } from "./confirm-view.ts";
import type { Host } from "./view.ts";

export async function removeWorktree(host: Host, row: BoardRow): Promise<void> {
	try {
		const { far } = await host.deps.service.removeWorktree(row.id);
		await host.run(`removed worktree of ${row.name}${far ? `; ${far}` : ""}`, row.id, async () => undefined);
	} catch (error) {
		// Question first: git's message is long.
		host.push(
			new ConfirmView(
				host,
				`Force-remove the worktree, losing its changes? git: ${message(error).replace(/\s+/g, " ")}`,
				() =>
					host.run(`force-removed worktree of ${row.name}`, row.id, () =>
						host.deps.service.removeWorktree(row.id, { force: true }),
					),
			),
		);
	}
}
