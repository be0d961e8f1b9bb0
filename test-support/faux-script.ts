/** The scripted model's vocabulary, shared by tests that write `<agentDir>/faux-script.json`. */
import type { JsonObject } from "@earendil-works/pi-ai";

export type FauxStep =
	| { text: string; usage?: { input: number; output: number } }
	| { toolCall: { name: string; args: JsonObject }; text?: string }
	| { error: string }
	| { stall: true }
	| { waitForFile: string; then: FauxStep }
	| { delayMs: number; then: FauxStep };

/**
 * The first rule whose `match` occurs in the latest user message answers. Its steps are played in
 * order across the turns of one run: step N answers the request that follows N assistant messages
 * after that user message (the last step repeats).
 */
export interface FauxRule {
	match?: string;
	steps: FauxStep[];
}

export interface FauxScript {
	rules: FauxRule[];
	fallback?: FauxStep[];
}
