/** Footer badge text: activity dot, name, mode. Colours come from the theme. */

/**
 * @param {Pick<import("@earendil-works/pi-coding-agent").Theme, "fg">} theme
 * @param {import("./modes.mjs").PonytailMode | "review"} mode @param {boolean} busy
 */
export function badgeText(theme, mode, busy) {
	const dot = busy ? theme.fg("accent", "\u25cf") : theme.fg("dim", "\u25cb");
	const label = theme.fg(mode === "off" ? "dim" : "text", mode);
	return `${dot} ${theme.fg("muted", "ponytail")} ${label}`;
}
