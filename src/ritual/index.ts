import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export function registerCloseRitual(pi: ExtensionAPI): void {
	void pi;
}
