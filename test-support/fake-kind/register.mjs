// Registers the fake kind: imported by a test, or by a link process through NODE_OPTIONS=--import.
import { registerKind } from "../../runner/kinds/kinds.mjs";
import { fakeKind } from "./fake-kind.mjs";

registerKind(fakeKind);
