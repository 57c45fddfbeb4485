/**
 * The conformance table of the repository README, rendered from the scenarios that
 * `run-cells.ts` runs, so that the README shows a ✓ only for a cell a test covers
 * (`readme.test.ts` keeps the two in step). One table per client format.
 */
import { tableUpstreams } from "./scenario";
import { SCENARIOS } from "./scenarios";
import { DELTA, TABLE_CLIENTS, TABLE_UPSTREAMS, type TableClient, type Upstream } from "./upstreams";

const LETTER: Record<TableClient | Upstream["protocol"], string> = {
  messages: "M",
  chat: "C",
  generate: "G",
  responses: "R",
};
const CLIENT_NAME: Record<TableClient, string> = {
  messages: "Messages-format clients",
  chat: "Chat-completions clients",
  responses: "Responses clients",
  generate: "generateContent clients",
};

/** The markdown tables: scenarios as rows; upstream, JSON / stream as columns. */
export function conformanceTable(): string {
  return TABLE_CLIENTS.map((client) => {
    const columns = TABLE_UPSTREAMS.flatMap((up) => (["JSON", "stream"] as const).map((mode) => ({ up, mode })));
    const head = `| scenario | ${columns.map((c) => `${LETTER[client]}→${LETTER[c.up.protocol]} ${c.mode}`).join(" | ")} |`;
    const rule = `|---|${columns.map(() => ":-:").join("|")}|`;
    const rows = Object.values(SCENARIOS).map((s) => {
      const ups = tableUpstreams(s);
      const mark = ups.includes(DELTA) ? " ¹" : "";
      return `| ${s.title}${mark} | ${columns.map((c) => (ups.includes(c.up) ? "✓" : "")).join(" | ")} |`;
    });
    return [`**${CLIENT_NAME[client]}**`, "", head, rule, ...rows].join("\n");
  }).join("\n\n");
}
