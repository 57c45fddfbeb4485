import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { renderScenario, splitColumn, total } from "./cost";
import type { CpuProfile } from "./profile-summary";
import { GATEWAY_RULES, REFERENCE_RULES, STEPS, stepShares } from "./steps";
import { threadDelta, threadGroup, threadMicros } from "./threads";

const ROOT = resolve(import.meta.dir, "../..");
const GW = `${ROOT}/apps/gateway/src`;
const frame = (functionName: string, url = "", lineNumber = 0) => ({ functionName, url, lineNumber });

/** A profile from call chains (root first), each sampled `n` times. */
function profileOf(chains: [frames: ReturnType<typeof frame>[], n: number][]): CpuProfile {
  const nodes: CpuProfile["nodes"] = [{ id: 1, callFrame: frame("(root)"), children: [] }];
  const samples: number[] = [];
  for (const [frames, n] of chains) {
    let parent = nodes[0]!;
    for (const f of frames) {
      const node = { id: nodes.length + 1, callFrame: f, children: [] as number[] };
      nodes.push(node);
      parent.children!.push(node.id);
      parent = node;
    }
    for (let i = 0; i < n; i++) samples.push(parent.id);
  }
  return { nodes, samples };
}

test("a sample is charged to the step of its innermost frame that has one; fetch is the upstream call wherever it is called", () => {
  const p = profileOf([
    // the body read: JSON.parse under readJsonBody
    [[frame("readJsonBody", `${GW}/http/read-body.ts`), frame("parse")], 3],
    // the usage row, through the pipeline's event
    [
      [
        frame("handleInference", `${GW}/pipeline/inference.ts`),
        frame("meter", `${GW}/metering/meter.ts`),
        frame("run", "bun:sqlite"),
      ],
      2,
    ],
    // fetch, called from dispatch's execute
    [[frame("execute", `${GW}/dispatch/execute.ts`), frame("fetch")], 4],
    // the stream's first frame judged
    [[frame("judge", `${GW}/relay/first-frame-guard.ts`), frame("parse")], 1],
    // reply headers are built in relay.ts, but they are the headers step
    [[frame("relay", `${GW}/relay/relay.ts`), frame("replyHeaders", `${GW}/relay/relay.ts`), frame("set")], 1],
    // the runtime alone: no JavaScript frame on the stack
    [[frame("(native)")], 5],
    // start-up and idle are not request work
    [[frame("bootGateway", `${GW}/boot.ts`), frame("compile")], 7],
    [[frame("(idle)")], 9],
    // a library nobody named
    [[frame("x", `${ROOT}/node_modules/.bun/some-lib@1/node_modules/some-lib/index.js`)], 1],
  ]);
  const { samples, shares } = stepShares(p, GATEWAY_RULES);
  expect(samples).toBe(17);
  const n = (step: (typeof STEPS)[number]) => Math.round(shares[step] * samples);
  expect(n("route and body read")).toBe(3);
  expect(n("ledger")).toBe(2);
  expect(n("upstream call")).toBe(4);
  expect(n("relay")).toBe(1);
  expect(n("headers")).toBe(1);
  expect(n("runtime")).toBe(5);
  expect(n("other")).toBe(1);
  expect(n("auth")).toBe(0);
});

test("the bare proxy's and the floor's code is read by the same steps", () => {
  const floor = `${ROOT}/bench/metering-floor/src/main.ts`;
  const p = profileOf([
    [[frame("POST", floor), frame("fetch")], 2],
    [[frame("POST", floor), frame("parse")], 3],
    [[frame("commit", floor), frame("run", "bun:sqlite")], 1],
    [[frame("fetch", `${ROOT}/bench/src/bare-proxy.ts`), frame("Response")], 1],
  ]);
  const { samples, shares } = stepShares(p, REFERENCE_RULES);
  expect(samples).toBe(7);
  expect(shares["upstream call"] * 7).toBeCloseTo(2);
  expect(shares.relay * 7).toBeCloseTo(4);
  expect(shares.ledger * 7).toBeCloseTo(1);
});

test("the JavaScript thread's measured CPU is split in the profile's proportions; the other threads stay rows of their own", () => {
  const shares = Object.fromEntries(STEPS.map((s) => [s, 0])) as Record<(typeof STEPS)[number], number>;
  shares.runtime = 0.25;
  shares["upstream call"] = 0.75;
  const col = splitColumn({ js: 40, "http client": 10, "gc, jit and others": 5 }, shares, 100, 54);
  expect(col.steps.runtime).toBe(10);
  expect(col.steps["upstream call"]).toBe(30);
  expect(total(col.threads)).toBe(55);
  const text = renderScenario({
    scenario: "messages passthrough",
    stream: false,
    kind: "passthrough",
    rounds: 3,
    gateway: col,
    bare: splitColumn({ js: 20, "http client": 8, "gc, jit and others": 1 }, shares, 90, 29),
    ratios: { gw_bare: [1.8, 1.9, 2.0] },
  });
  expect(text).toContain("| upstream call | 30.0 | 15.0 | — |");
  expect(text).toContain("| **total** | **55.0** | **29.0** | **—** |");
  expect(text).toContain("Turnpike over the bare proxy 1.90× (1.80–2.00)");
  expect(text).not.toContain("| auth |"); // a step that costs nothing anywhere is left out
});

test("threads are grouped: the main thread is the JavaScript thread, Bun's `HTTP Client` the fetch I/O", () => {
  expect(threadGroup(100, 100, "bun")).toBe("js");
  expect(threadGroup(100, 101, "HTTP Client")).toBe("http client");
  expect(threadGroup(100, 102, "HeapHelper")).toBe("gc, jit and others");
  const before = new Map([
    [100, { group: "js" as const, us: 1000 }],
    [101, { group: "http client" as const, us: 500 }],
  ]);
  const after = new Map([
    [100, { group: "js" as const, us: 4000 }],
    [101, { group: "http client" as const, us: 700 }],
    [103, { group: "gc, jit and others" as const, us: 50 }],
  ]);
  expect(threadDelta(before, after)).toEqual({ js: 3000, "http client": 200, "gc, jit and others": 50 });
});

test("this process's own threads can be read", () => {
  const own = threadMicros(process.pid);
  expect(own.get(process.pid)?.group).toBe("js");
  for (const t of own.values()) expect(t.us).toBeGreaterThanOrEqual(0); // in clock ticks: a young thread may read 0
});
