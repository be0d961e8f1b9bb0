// vitest setupFiles of the unit project (file-setup.ts).
import { setUpTestFile } from "./file-setup.ts";

setUpTestFile({ unit: true });
