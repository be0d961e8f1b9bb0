import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export function registerBoard(pi: ExtensionAPI): void {
	void pi;
}
