import type { Daily } from "../api";
import { int, usd } from "../api";

const total = (d: Daily | null, f: "requests" | "tokens" | "cost_usd" | "errors") =>
  (d?.series ?? []).reduce((a, s) => a + s[f].reduce((x, y) => x + y, 0), 0);

/** The change from the previous period, in words a glance can read. */
function change(now: number, before: number, asPoints = false): string {
  if (asPoints) {
    const d = (now - before) * 100;
    return Math.abs(d) < 0.05 ? "same as before" : `${d > 0 ? "+" : "−"}${Math.abs(d).toFixed(1)} pts`;
  }
  if (before === 0) return now === 0 ? "same as before" : "new";
  const pct = ((now - before) / before) * 100;
  return Math.abs(pct) < 0.5 ? "same as before" : `${pct > 0 ? "+" : "−"}${Math.abs(Math.round(pct))}%`;
}

const pct = (x: number) => `${(x * 100).toFixed(x > 0 && x < 0.01 ? 2 : 1)}%`;

/**
 * Spend, requests, tokens and error rate of the chosen days, each against the same number of
 * days just before them. The error rate is of the requests in the ledger (those that reached a
 * model); refusals before that are counted in the live log.
 */
export function Headline({ now, before, days }: { now: Daily | null; before: Daily | null; days: number }) {
  const rate = (d: Daily | null) => {
    const r = total(d, "requests");
    return r === 0 ? 0 : total(d, "errors") / r;
  };
  const tiles = [
    {
      name: "Spend",
      value: usd(total(now, "cost_usd")),
      delta: change(total(now, "cost_usd"), total(before, "cost_usd")),
    },
    {
      name: "Requests",
      value: int(total(now, "requests")),
      delta: change(total(now, "requests"), total(before, "requests")),
    },
    { name: "Tokens", value: int(total(now, "tokens")), delta: change(total(now, "tokens"), total(before, "tokens")) },
    { name: "Error rate", value: pct(rate(now)), delta: change(rate(now), rate(before), true) },
  ];
  return (
    <section className="tiles" aria-label="Totals">
      {tiles.map((t) => (
        <section key={t.name} className="tile" aria-label={t.name}>
          <span className="tile-name">{t.name}</span>
          <strong className="tile-value" data-testid={`total-${t.name.toLowerCase().replace(" ", "-")}`}>
            {t.value}
          </strong>
          <span className="tile-delta">
            {t.delta} <small>vs the {days} days before</small>
          </span>
        </section>
      ))}
    </section>
  );
}
