import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerBoard } from "./board/index.ts";
import { registerPonytail } from "./ponytail/index.ts";
import { registerCloseRitual } from "./ritual/index.ts";

/** Entry point pi loads: wiring only, each feature registers itself. */
export default async function piAgentBoard(pi: ExtensionAPI): Promise<void> {
	// Board first: a worker's input handler swaps the prompt placeholder for the real prompt, and input
	// transforms chain in registration order, so every later handler sees the real prompt.
	await registerBoard(pi);
	registerPonytail(pi);
	registerCloseRitual(pi);
}
