import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function piAgentBoard(pi: ExtensionAPI): void {
	void pi;
}
