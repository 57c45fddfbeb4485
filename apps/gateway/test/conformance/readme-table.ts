/**
 * The conformance table of the repository README, rendered from the scenarios that
 * `run-cells.ts` runs, so that the README shows a ✓ only for a cell a test covers
 * (`readme.test.ts` keeps the two in step).
 */
import { SCENARIOS } from "./scenarios";
import { CLIENTS, DELTA, UPSTREAMS, type ClientFormat, type Upstream } from "./upstreams";

const LETTER: Record<ClientFormat | Upstream["protocol"], string> = { messages: "M", chat: "C", generate: "G" };

/** The markdown table: scenarios as rows; client → upstream, JSON / stream as columns. */
export function conformanceTable(): string {
  const columns = CLIENTS.flatMap((client) => UPSTREAMS.flatMap((up) => (["JSON", "stream"] as const).map((mode) => ({ client, up, mode }))));
  const head = `| scenario | ${columns.map((c) => `${LETTER[c.client]}→${LETTER[c.up.protocol]} ${c.mode}`).join(" | ")} |`;
  const rule = `|---|${columns.map(() => ":-:").join("|")}|`;
  const rows = Object.values(SCENARIOS).map((s) => {
    const mark = s.upstreams.includes(DELTA) ? " ¹" : "";
    return `| ${s.title}${mark} | ${columns.map((c) => (s.upstreams.includes(c.up) ? "✓" : "")).join(" | ")} |`;
  });
  return [head, rule, ...rows].join("\n");
}
