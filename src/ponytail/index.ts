import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export function registerPonytail(pi: ExtensionAPI): void {
	void pi;
}
