import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerBoard } from "./board/index.ts";
import { registerPonytail } from "./ponytail/index.ts";
import { registerCloseRitual } from "./ritual/index.ts";

/** Entry point pi loads: wiring only, each feature registers itself. */
export default function piAgentBoard(pi: ExtensionAPI): void {
	registerPonytail(pi);
	registerBoard(pi);
	registerCloseRitual(pi);
}
