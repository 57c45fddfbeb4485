/**
 * The import check of the gateway (docs/design.md, "Floors"): no import cycle, and no import that
 * points up a floor. Run by the test command (scripts/test-all.ts) and on its own with
 * `bun scripts/check-imports.ts`; it prints each offending import and exits 1.
 *
 * The graph is madge's (type-only imports and dynamic imports count: a type is a dependency too).
 * Each file of `apps/gateway/src` (tests aside) is placed on a floor by the first rule of FLOORS
 * that matches its path; a file no rule places is an error, so a new file is placed on purpose.
 */
import { join } from "node:path";
import madge from "madge";

const root = join(import.meta.dir, "..");
const src = join(root, "apps/gateway/src");

/** A floor: its name, and the paths (relative to src, `*` = any name within one folder) on it. */
interface Floor {
  name: string;
  paths: string[];
}

/** Lowest first. A file may import files of its own floor and of the floors below it. */
export const FLOORS: Floor[] = [
  { name: "vocabulary", paths: ["vocabulary/*"] },
  {
    name: "parts",
    paths: [
      "http/*",
      "formats/*",
      "protocols/*",
      "protocols/chat/*",
      "protocols/generate/*",
      "protocols/messages/*",
      "protocols/responses/*",
      "keys/*",
      "limits/*",
      "metering/*",
      "stored-responses/*",
      "storage/*",
      "teams/*",
      "sign-on/*",
      "dispatch/*",
      "pipeline/context.ts",
      "pipeline/events.ts",
      "telemetry/logger.ts",
      "telemetry/scrub-secrets.ts",
      "telemetry/label-cache.ts",
      "telemetry/light-metrics.ts",
      "telemetry/refusal-log.ts",
      "mcp/mcp-config.ts",
      "mcp/session-store.ts",
      "mcp/namespacing.ts",
      "mcp/tool-allow-list.ts",
      "batches/batch-store.ts",
      "batches/file-lines.ts",
      "guardrails/*",
      "guardrails/__fixtures__/*",
    ],
  },
  { name: "wiring", paths: ["config/*", "deps.ts", "storage/open-backends.ts", "telemetry/*"] },
  {
    name: "steps",
    paths: [
      "keys/authenticate.ts",
      "limits/admit.ts",
      "limits/admit-read.ts",
      "dispatch/resolve.ts",
      "dispatch/plan.ts",
      "dispatch/execute.ts",
      "dispatch/attempts.ts",
      "dispatch/continuation.ts",
      "relay/*",
      "metering/meter.ts",
      "stored-responses/recall.ts",
      "stored-responses/remember.ts",
      "pipeline/validate.ts",
    ],
  },
  { name: "pipeline", paths: ["pipeline/*", "mcp/*", "embeddings/*", "batches/*"] },
  {
    name: "surfaces",
    paths: [
      "routes/*",
      "embeddings/embeddings-routes.ts",
      "batches/batch-routes.ts",
      "admin/*",
      "openapi/*",
      "telemetry/metrics-route.ts",
      "stored-responses/routes.ts",
      "mcp/mcp-routes.ts",
      "teams/team-routes.ts",
      "sign-on/sign-on-routes.ts",
    ],
  },
  { name: "composition", paths: ["app.ts", "boot.ts", "main.ts", "cli.ts", "cli-ops.ts"] },
];

/** The most specific rule wins: an exact path over a folder's `*`, whatever floor either is on. */
export function floorOf(file: string): number | undefined {
  let best: { floor: number; exact: boolean } | undefined;
  FLOORS.forEach((floor, i) => {
    for (const p of floor.paths) {
      const exact = p === file;
      const inFolder = p.endsWith("/*") && file.startsWith(p.slice(0, -1)) && !file.slice(p.length - 1).includes("/");
      if ((exact || inFolder) && (!best || (exact && !best.exact))) best = { floor: i, exact };
    }
  });
  return best?.floor;
}

const graph = await madge(src, {
  fileExtensions: ["ts"],
  tsConfig: join(root, "apps/gateway/tsconfig.json"),
  excludeRegExp: [/\.test\.ts$/],
  detectiveOptions: { ts: { skipTypeImports: false, skipAsyncImports: false } },
});

const problems: string[] = [];
for (const cycle of graph.circular()) problems.push(`cycle: ${[...cycle, cycle[0]].join(" → ")}`);
for (const s of graph.warnings().skipped) if (s.startsWith(".")) problems.push(`unresolved import: ${s}`);
const deps = graph.obj();
for (const [file, imports] of Object.entries(deps)) {
  // Files outside src (test helpers) appear only as what tests import; production never imports them.
  if (file.startsWith("../")) continue;
  // A workspace package (resolved through its build, `packages/*/dist`) is the floor below them all.
  for (const target of imports)
    if (target.startsWith("../") && !target.includes("/packages/")) problems.push(`outside src: ${file} → ${target}`);
  const from = floorOf(file);
  if (from === undefined) {
    problems.push(`no floor: ${file} (add it to FLOORS in scripts/check-imports.ts)`);
    continue;
  }
  for (const target of imports) {
    const to = floorOf(target);
    if (to !== undefined && to > from)
      problems.push(`upward: ${file} (${FLOORS[from]!.name}) → ${target} (${FLOORS[to]!.name})`);
  }
}

if (problems.length) {
  console.log(`import check of apps/gateway/src: ${problems.length} problem(s)\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(
  `import check of apps/gateway/src: ${Object.keys(deps).filter((f) => !f.startsWith("../")).length} files on ${FLOORS.length} floors, no cycle, no upward import`,
);
