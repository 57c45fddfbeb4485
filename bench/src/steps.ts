/**
 * The steps of a request, as the cost table names them (issue 32), and which code is which step.
 *
 * A profile sample is charged to the step of the innermost frame that belongs to one: a native
 * frame (`JSON.parse`, `TextDecoder.decode`) is charged to the JavaScript code that called it,
 * except `fetch`, which is the upstream call wherever it is called from. The shared packages
 * (`@turnpike/schema`'s validators and SSE codec, `@turnpike/providers`' translations, TypeBox)
 * belong to no step of their own: they are charged to the gateway code that called them (a
 * validator to validation, a stream encoder to the tap, a request translation to the upstream
 * request). A sample with no
 * JavaScript frame at all is the runtime's own work on the JavaScript thread: accepting
 * connections, parsing HTTP, writing replies and streaming bodies (`runtime`).
 */
import type { CpuProfile } from "./profile-summary";

export const STEPS = [
  "runtime",
  "route and body read",
  "validation",
  "auth",
  "limits",
  "plan",
  "upstream request",
  "upstream call",
  "relay",
  "tap",
  "ledger",
  "headers",
  "log",
  "metrics",
  "trail",
  "pipeline",
  "other",
] as const;
export type Step = (typeof STEPS)[number];

/** What each step covers, for the table's notes. */
export const STEP_NOTES: Record<Step, string> = {
  runtime:
    "Bun's own work on the JavaScript thread with no JavaScript on the stack: sockets, HTTP parsing, reply writes, body streaming",
  "route and body read": "routing, the 431 header-size walk, the body read and parsed, the request id",
  validation: "the client format's schema and rules",
  auth: "the key found by its hash",
  limits: "rate and spend limits admitted and settled",
  plan: "model, deployment and attempt chosen; deadlines; breaker and affinity",
  "upstream request":
    "the upstream body and headers written (passthrough: the client's text; translated: the upstream protocol's request)",
  "upstream call": "`fetch` on the JavaScript thread (its I/O runs on Bun's HTTP client thread, a row of its own)",
  relay: "the reply carried to the client: first-frame guard, line gate, terminal cut, the JSON reply read",
  tap: "usage read out of the reply (the stream scanners, the usage audit; translated: the state machines and encoders)",
  ledger: "the usage row, its group commit and the in-memory tally",
  headers: "reply headers: templates, the key's limit headers",
  log: "the request log line",
  metrics: "counters and histograms",
  trail: "the request trail and tracing hooks",
  pipeline: "the pipeline's own code between the steps (events, context)",
  other: "anything else (libraries not named above)",
};

interface Rule {
  step: Step;
  /** Tested on the frame's script URL (a file path); a rule without it matches native frames only. */
  file?: RegExp;
  /** Tested on the function's name; a rule without it takes every function of the file. */
  fn?: RegExp;
}

const GW = "/apps/gateway/src/";
const f = (path: string) => new RegExp(`${GW}${path}`);

/** The gateway's code by step, first match wins (file names of apps/gateway/src and its packages). */
export const GATEWAY_RULES: Rule[] = [
  { step: "upstream call", fn: /^fetch$/ },
  { step: "headers", file: f("relay/relay\\.ts"), fn: /^replyHeaders$/ },
  { step: "headers", file: f("(formats/rate-limit-headers|http/headers)\\.ts") },
  { step: "tap", file: f("relay/(passthrough-tap|translated-tap|tap-pivot|usage-audit)\\.ts") },
  { step: "tap", file: f("protocols/sse-scan\\.ts") },
  { step: "validation", file: f("formats/"), fn: /^validate|Validate/ },
  { step: "tap", file: f("formats/") },
  { step: "relay", file: f("relay/") },
  { step: "ledger", file: f("(metering/|storage/|limits/(postgres-)?inflight\\.ts)") },
  { step: "ledger", file: /^bun:sqlite/ },
  {
    step: "log",
    file: f("(telemetry/(request-log|refused-requests)|log/(logger|scrub-secrets)|request/refusal-log)\\.ts"),
  },
  { step: "metrics", file: f("telemetry/(metrics|light-metrics|label-cache|gen-ai-names)\\.ts") },
  { step: "metrics", file: /node_modules\/.*prom-client/ },
  { step: "trail", file: f("telemetry/") },
  { step: "trail", file: /node_modules\/.*@opentelemetry/ },
  { step: "auth", file: f("(keys|access)/") },
  { step: "limits", file: f("limits/") },
  { step: "upstream call", file: f("dispatch/execute\\.ts") },
  { step: "plan", file: f("dispatch/") },
  { step: "plan", file: f("protocols/model-label\\.ts") },
  { step: "validation", file: f("pipeline/validate\\.ts") },
  { step: "upstream request", file: f("protocols/") },
  { step: "pipeline", file: f("request/(context|events)\\.ts") },
  { step: "route and body read", file: f("(http|routes|request)/") },
  { step: "route and body read", file: f("app\\.ts") },
  { step: "route and body read", file: /node_modules\/.*elysia/ },
  { step: "pipeline", file: f("pipeline/") },
];

/** The bare proxy (src/bare-proxy.ts) and the metering floor (metering-floor/src/main.ts), by the same steps. */
export const REFERENCE_RULES: Rule[] = [
  { step: "upstream call", fn: /^fetch$/ },
  { step: "ledger", file: /^bun:sqlite/ },
  { step: "ledger", file: /metering-floor\/src\/main\.ts/, fn: /^(commit|record|insert)$/ },
  { step: "tap", file: /metering-floor\/src\/main\.ts/, fn: /^numberAfter$/ },
  { step: "relay", file: /(metering-floor\/src\/main|src\/bare-proxy)\.ts/ },
];

interface Frame {
  functionName: string;
  url: string;
}

function stepOf(frame: Frame, rules: Rule[]): Step | undefined {
  for (const r of rules) {
    if (r.file ? !r.file.test(frame.url) : frame.url !== "") continue;
    if (r.fn && !r.fn.test(frame.functionName)) continue;
    return r.step;
  }
  return undefined;
}

/** Frames below which every sample is start-up work, not request work (as in profile-summary.ts). */
const STARTUP = new Set(["(module)", "bootGateway", "compile", "makeValidator", "createBunRouteHandler"]);

export interface StepShares {
  /** Samples of request work (start-up and idle left out). */
  samples: number;
  /** Each step's share of them, 0–1. */
  shares: Record<Step, number>;
}

/** Each step's share of a profile's request samples. */
export function stepShares(p: CpuProfile, rules: Rule[]): StepShares {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, Step | "startup" | "idle">();
  const classify = (id: number): Step | "startup" | "idle" => {
    const hit = memo.get(id);
    if (hit) return hit;
    const chain: Frame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur))
      chain.push(byId.get(cur)!.callFrame);
    let out: Step | "startup" | "idle";
    const leaf = chain[0]!.functionName;
    if (chain.some((fr) => STARTUP.has(fr.functionName))) out = "startup";
    else if (leaf === "(idle)" || leaf === "(root)") out = "idle";
    else {
      const js = chain.some((fr) => fr.url !== "" && !fr.url.startsWith("bun:") && !fr.url.startsWith("node:"));
      out = js ? (chain.map((fr) => stepOf(fr, rules)).find((s) => s !== undefined) ?? "other") : "runtime";
    }
    memo.set(id, out);
    return out;
  };
  const counts = Object.fromEntries(STEPS.map((s) => [s, 0])) as Record<Step, number>;
  let samples = 0;
  for (const id of p.samples) {
    const s = classify(id);
    if (s === "startup" || s === "idle") continue;
    counts[s]++;
    samples++;
  }
  const shares = Object.fromEntries(STEPS.map((s) => [s, samples ? counts[s] / samples : 0])) as Record<Step, number>;
  return { samples, shares };
}
