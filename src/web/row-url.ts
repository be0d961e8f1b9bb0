// A row's address on the page is stated once, runner-side, where the notifiers build it too.
export { rowUrl } from "../../runner/notify/web-link.mjs";
