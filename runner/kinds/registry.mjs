// The kinds of target this package has: a new kind is its folder under runner/kinds/ and its entry
// here (kinds.mjs looks them up; a test's kind registers itself there at run time).
import { containerKind } from "./container/container-kind.mjs";
import { sshKind } from "./ssh/ssh-kind.mjs";

/** In the order usage lines and messages name them. */
export const KINDS = [sshKind, containerKind];
