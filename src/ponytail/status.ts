/** Footer badge text: activity dot, name, mode. Colours come from the theme. */
import type { Theme } from "@earendil-works/pi-coding-agent";
import type { PonytailMode } from "./modes.ts";

export function badgeText(theme: Pick<Theme, "fg">, mode: PonytailMode | "review", busy: boolean): string {
	const dot = busy ? theme.fg("accent", "\u25cf") : theme.fg("dim", "\u25cb");
	const label = theme.fg(mode === "off" ? "dim" : "text", mode);
	return `${dot} ${theme.fg("muted", "ponytail")} ${label}`;
}
