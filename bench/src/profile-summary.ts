/**
 * Reads a `.cpuprofile` (Chrome DevTools format, as `bun --cpu-prof` writes it) and says where
 * the CPU of the requests went: start-up samples (module loading, boot, Elysia's one-time route
 * compile) are left out, native frames are charged to their nearest JavaScript caller, and each
 * line is scaled to µs per request with the measured CPU per request.
 */

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
}

/** Frames below which every sample is start-up work, not request work. */
const STARTUP = new Set(["(module)", "bootGateway", "compile", "makeValidator", "createBunRouteHandler"]);

export interface ProfileLine {
  /** `fn (file:line)`, or `native ← caller (file:line)` for native frames. */
  what: string;
  share: number;
}

export interface ProfileSummary {
  requestSamples: number;
  startupSamples: number;
  top: ProfileLine[];
  /** Self time rolled up by where the code lives (package, or gateway folder). */
  areas: ProfileLine[];
}

/** Where a script lives, short: `elysia`, `gateway/pipeline`, `schema`, `bun:sqlite`… */
export function area(url: string): string {
  if (url === "") return "native";
  const pkg = /node_modules\/(?:\.bun\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const gw = /\/apps\/gateway\/src\/([^/]+)\//.exec(url);
  if (gw) return `gateway/${gw[1]}`;
  const p = /\/packages\/([^/]+)\//.exec(url);
  if (p) return p[1]!;
  return url.split("/").slice(-1)[0]!;
}

function where(f: { functionName: string; url: string; lineNumber: number }): string {
  const file = f.url.split("/").slice(-2).join("/");
  return `${f.functionName || "(anonymous)"} (${file}:${f.lineNumber + 1})`;
}

export function summarizeProfile(p: CpuProfile, topN = 25): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ancestors = function* (id: number) {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) yield byId.get(cur)!;
  };
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  let startup = 0;
  let counted = 0;
  for (const id of p.samples) {
    const chain = [...ancestors(id)];
    if (chain.some((n) => STARTUP.has(n.callFrame.functionName))) {
      startup++;
      continue;
    }
    const leaf = chain[0]!;
    if (leaf.callFrame.functionName === "(root)" || leaf.callFrame.functionName === "(idle)") continue;
    counted++;
    let key: string;
    let areaName: string;
    if (leaf.callFrame.url === "") {
      const caller = chain.find(
        (n) => n.callFrame.url !== "" && !n.callFrame.url.startsWith("bun:") && !n.callFrame.url.startsWith("node:"),
      );
      key = `${leaf.callFrame.functionName || "(native)"} ← ${caller ? where(caller.callFrame) : "(event loop)"}`;
      areaName = caller ? area(caller.callFrame.url) : "native (event loop)";
    } else {
      key = where(leaf.callFrame);
      areaName = area(leaf.callFrame.url);
    }
    self.set(key, (self.get(key) ?? 0) + 1);
    areas.set(areaName, (areas.get(areaName) ?? 0) + 1);
  }
  const lines = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).map(([what, n]) => ({ what, share: counted ? n / counted : 0 }));
  return { requestSamples: counted, startupSamples: startup, top: lines(self).slice(0, topN), areas: lines(areas) };
}

/** The summary as text, each line scaled to µs per request. */
export function renderProfileSummary(title: string, s: ProfileSummary, cpuUsPerReq: number): string {
  const row = (l: ProfileLine) =>
    `${(l.share * 100).toFixed(1).padStart(5)} %  ${(l.share * cpuUsPerReq).toFixed(1).padStart(6)} µs/req  ${l.what}`;
  return [
    `${title}: ${cpuUsPerReq.toFixed(1)} µs CPU per request (under the profiler); ${s.requestSamples} request samples, ${s.startupSamples} start-up samples left out`,
    "by area (native frames charged to their JavaScript caller's area):",
    ...s.areas.slice(0, 12).map(row),
    "top frames (self):",
    ...s.top.map(row),
  ].join("\n");
}
