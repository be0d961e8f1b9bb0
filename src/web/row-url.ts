/** A row's address on the page: the page opens it once the board is there (page-tools.js's revealFromUrl). */
export function rowUrl(base: string, id: string): string {
	return `${base}/?row=${encodeURIComponent(id)}`;
}
