// Runner <-> worker protocol over the worker's fd 3 (a socketpair): JSON lines, split on "\n" only.
// runner -> worker: {type:"prompt",text} first, then {type:"message",id,text,deliverAs} and {type:"abort"}.
// worker -> runner: {type:"receipt",id,status,as?,reason?} once per message; {type:"closed"} when it
// will accept no more messages (the run is settling).

/** The only prompt argument a worker gets: the real prompt never travels through argv. */
export const PROMPT_PLACEHOLDER = "[agent-board: prompt arrives on the control channel]";
export const CONTROL_FD = 3;
