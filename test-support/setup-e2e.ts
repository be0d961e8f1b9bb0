// vitest setupFiles of the end-to-end project (file-setup.ts).
import { setUpTestFile } from "./file-setup.ts";

setUpTestFile({ unit: false });
