// The types of the vendored shell-quote parse (shell-quote-parse.cjs, a byte-for-byte copy of
// shell-quote 1.12.0's parse.js; tests/supervisor-action.test.ts checks it against node_modules).
type Entry = string | { op: string } | { op: "glob"; pattern: string } | { comment: string };
declare function parse(s: string, env?: Record<string, string> | ((key: string) => string), opts?: object): Entry[];
export = parse;
