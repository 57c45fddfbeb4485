/**
 * The import check of the gateway (docs/design.md, "Tiers of folders"; decisions/0031-folder-tiers.md):
 * no import cycle between files, no loop between folders, and no folder import that climbs a tier.
 * Run by the test command (scripts/test-all.ts) and on its own with `bun scripts/check-imports.ts`;
 * it prints each offending import and exits 1.
 *
 * The graph is madge's (type-only imports and dynamic imports count: a type is a dependency too).
 * Each folder of `apps/gateway/src` (its "room"; a file directly in src/ is a room of its own) sits
 * on one tier of TIERS; a room no tier names is an error, so a new folder is placed on purpose.
 * A room may import rooms of its own tier and of the tiers below, and the rooms of one tier must
 * not import each other round in a loop.
 */
import { join } from "node:path";

/** A tier: its name, and the rooms on it (a folder of src, or a file directly in src). */
export interface Tier {
  name: string;
  rooms: string[];
}

/** Lowest first. A room may import rooms of its own tier and of the tiers below it. */
export const TIERS: Tier[] = [
  // Words every room shares: record types, formats' names, errors' wording.
  { name: "vocabulary", rooms: ["vocabulary"] },
  // HTTP plumbing, the database layer (SQLite, PostgreSQL, Redis links, migrations), the logger.
  { name: "foundations", rooms: ["http", "storage", "log"] },
  // Client formats and upstream protocols: pure conversions.
  { name: "formats", rooms: ["formats", "protocols"] },
  // One request: its context, its lifecycle events, its error replies in the caller's format.
  { name: "request", rooms: ["request"] },
  // The concerns, each declaring the small interface it needs (never GatewayDeps).
  {
    name: "concerns",
    rooms: [
      "keys",
      "teams",
      "limits",
      "metering",
      "dispatch",
      "relay",
      "stored-responses",
      "telemetry",
      "guardrails",
      "tools",
      "sign-on",
    ],
  },
  // Who is calling: authentication, the principal, the admin guard.
  { name: "access", rooms: ["access"] },
  // The configuration file, and GatewayDeps assembled from it.
  { name: "wiring", rooms: ["config", "wiring"] },
  // Each kind of operation, run through the steps.
  { name: "surfaces", rooms: ["pipeline", "embeddings", "batches", "mcp"] },
  // HTTP routes (sign-on's among them), the admin API and its dashboard, the OpenAPI document.
  { name: "routes", rooms: ["routes", "admin", "openapi"] },
  { name: "boot", rooms: ["app.ts", "boot.ts", "main.ts", "cli.ts", "cli-ops.ts"] },
];

/** The room of a file (path relative to src): its first folder, or the file itself at the top. */
export function roomOf(file: string): string {
  const slash = file.indexOf("/");
  return slash < 0 ? file : file.slice(0, slash);
}

/** The folder loops (strongly connected rooms, more than one) of a room graph (Tarjan's). */
export function roomLoops(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) loops.push(scc.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return loops;
}

/**
 * The problems of a file graph (file → the files it imports, paths relative to src, as madge gives
 * them): a room on no tier, a folder import that climbs, a loop of rooms. Files outside src
 * (`../…`, test helpers and workspace packages) are no room's.
 */
export function checkGraph(
  deps: Readonly<Record<string, readonly string[]>>,
  tiers: readonly Tier[] = TIERS,
): string[] {
  const tierOf = new Map<string, number>();
  tiers.forEach((t, i) => {
    for (const r of t.rooms) tierOf.set(r, i);
  });
  const problems: string[] = [];
  const unplaced = new Set<string>();
  const edges = new Map<string, Set<string>>();
  for (const [file, imports] of Object.entries(deps)) {
    if (file.startsWith("../")) continue;
    const from = roomOf(file);
    const fromTier = tierOf.get(from);
    if (fromTier === undefined) {
      if (!unplaced.has(from)) problems.push(`no tier: ${from} (add it to TIERS in scripts/check-imports.ts)`);
      unplaced.add(from);
      continue;
    }
    for (const target of imports) {
      if (target.startsWith("../")) {
        // A workspace package (resolved through its build, `packages/*/dist`) is below every tier.
        if (!target.includes("/packages/")) problems.push(`outside src: ${file} → ${target}`);
        continue;
      }
      const to = roomOf(target);
      if (to === from) continue;
      const toTier = tierOf.get(to);
      if (toTier === undefined) continue; // reported as the importer of its own files
      if (toTier > fromTier)
        problems.push(`climbs: ${file} (${tiers[fromTier]!.name}) → ${target} (${tiers[toTier]!.name})`);
      let out = edges.get(from);
      if (!out) edges.set(from, (out = new Set()));
      out.add(to);
    }
  }
  for (const loop of roomLoops(edges)) {
    const inLoop = new Set(loop);
    const why = Object.entries(deps)
      .flatMap(([f, imps]) => imps.map((t) => [f, t] as const))
      .filter(([f, t]) => inLoop.has(roomOf(f)) && inLoop.has(roomOf(t)) && roomOf(f) !== roomOf(t))
      .map(([f, t]) => `${f} → ${t}`);
    problems.push(`folder loop: ${loop.join(", ")} (${why.join("; ")})`);
  }
  return problems;
}

if (import.meta.main) {
  const { default: madge } = await import("madge");
  const root = join(import.meta.dir, "..");
  const src = join(root, "apps/gateway/src");
  const graph = await madge(src, {
    fileExtensions: ["ts"],
    tsConfig: join(root, "apps/gateway/tsconfig.json"),
    excludeRegExp: [/\.test\.ts$/],
    detectiveOptions: { ts: { skipTypeImports: false, skipAsyncImports: false } },
  });
  const deps = graph.obj();
  const problems: string[] = [];
  for (const cycle of graph.circular()) problems.push(`cycle: ${[...cycle, cycle[0]].join(" → ")}`);
  for (const s of graph.warnings().skipped) if (s.startsWith(".")) problems.push(`unresolved import: ${s}`);
  problems.push(...checkGraph(deps));
  if (problems.length) {
    console.log(`import check of apps/gateway/src: ${problems.length} problem(s)\n  ${problems.join("\n  ")}`);
    process.exit(1);
  }
  const files = Object.keys(deps).filter((f) => !f.startsWith("../"));
  const rooms = new Set(files.map(roomOf));
  console.log(
    `import check of apps/gateway/src: ${files.length} files in ${rooms.size} rooms on ${TIERS.length} tiers, no cycle, no folder loop, no climb`,
  );
}
