/** The scripted model's vocabulary, for tests that write `<agentDir>/faux-script.json` (defined with the model itself). */
export type { FauxRule, FauxScript, FauxStep } from "./faux-model-extension.ts";
