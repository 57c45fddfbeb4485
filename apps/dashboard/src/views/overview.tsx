import { Alert } from "../alert";
import { useEffect, useState } from "react";
import { api, type Daily, int, type Key, type LatencyRow, type RequestLine, usd } from "../api";

/** One row of `GET /admin/latency`. */
type Latency = LatencyRow;
/** One row of `GET /admin/usage/latency?by=model,deployment`. */
interface LedgerLatency {
  model: string;
  deployment: string;
  requests: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
}
interface Team {
  id: string;
  name: string;
  budget_usd: number | null;
  spent_this_month_usd?: number;
}
interface Budget {
  id: string;
  kind: "key" | "team";
  name: string;
  spent: number;
  limit: number;
}

const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const ms = (x: number | null) => (x === null ? "—" : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`);
const pct = (x: number) => `${(x * 100).toFixed(x > 0 && x < 0.01 ? 2 : 1)}%`;

/**
 * The day at a glance: spend today and this month (UTC) against each budget, latency and time to
 * first token by model and deployment, and today's refusals by reason. Read from the admin API's
 * existing feeds (daily usage, keys, teams, the live log) and `GET /admin/latency` (this
 * instance's last requests).
 */
export function Overview({ keys }: { keys: Key[] }) {
  const [month, setMonth] = useState<Daily | null>(null);
  const [teams, setTeams] = useState<Team[]>([]);
  const [latency, setLatency] = useState<{ window: number; data: Latency[] } | null>(null);
  const [ledgerLatency, setLedgerLatency] = useState<LedgerLatency[]>([]);
  const [refused, setRefused] = useState<RequestLine[]>([]);
  const [error, setError] = useState<string | null>(null);
  // The moment the view opened: its "today" and "this month" (UTC).
  const [now] = useState(() => Date.now());
  const today = day(now);
  const firstOfMonth = `${today.slice(0, 8)}01`;

  useEffect(() => {
    const fail = (e: Error) => setError(e.message);
    api<Daily>(`/admin/usage/daily?by=team&since=${firstOfMonth}&until=${today}`).then(setMonth, fail);
    api<{ data: Team[] }>("/admin/teams").then(
      (r) => setTeams(r.data),
      () => setTeams([]),
    );
    api<{ window: number; data: Latency[] }>("/admin/latency").then(setLatency, () => setLatency(null));
    // Every instance's requests this month, from the ledger's rollups: percentiles within a latency bucket.
    api<{ data: LedgerLatency[] }>(
      `/admin/usage/latency?by=model,deployment&since=${encodeURIComponent(`${firstOfMonth}T00:00:00.000Z`)}`,
    ).then(
      (r) => setLedgerLatency(r.data),
      () => setLedgerLatency([]),
    );
    const midnight = new Date(now - (now % DAY_MS)).toISOString();
    api<{ data: RequestLine[] }>(`/admin/requests?since=${encodeURIComponent(midnight)}&limit=1000`).then(
      (r) => setRefused(r.data.filter((l) => l.refused)),
      () => setRefused([]),
    );
  }, [today, firstOfMonth, now]);

  const last = (month?.days.length ?? 0) - 1;
  const spentToday = sum((month?.series ?? []).map((s) => s.cost_usd[last] ?? 0));
  const spentMonth = sum((month?.series ?? []).map((s) => sum(s.cost_usd)));
  const requestsToday = sum((month?.series ?? []).map((s) => s.requests[last] ?? 0));
  const errorsToday = sum((month?.series ?? []).map((s) => s.errors[last] ?? 0));
  const budgets: Budget[] = [
    ...teams
      .filter((t) => t.budget_usd !== null)
      .map((t) => ({
        id: t.id,
        kind: "team" as const,
        name: t.name,
        spent: t.spent_this_month_usd ?? 0,
        limit: t.budget_usd!,
      })),
    ...keys
      .filter((k) => k.budget_usd !== null && k.revoked_at === null)
      .map((k) => ({
        id: k.id,
        kind: "key" as const,
        name: k.name,
        spent: k.spent_this_month_usd ?? 0,
        limit: k.budget_usd!,
      })),
  ].sort((a, b) => b.spent / b.limit - a.spent / a.limit);
  // Refusals by status and type, with the newest reason given for each.
  const reasons = new Map<string, { status: number; type: string; count: number; reason: string }>();
  for (const l of refused) {
    const slot = `${l.status} ${l.error_type ?? ""}`;
    const r = reasons.get(slot);
    if (r) r.count += 1;
    else reasons.set(slot, { status: l.status, type: l.error_type ?? "", count: 1, reason: l.reason ?? "" });
  }
  const tiles = [
    { name: "Spend today", value: usd(spentToday), note: "since midnight UTC" },
    { name: "Spend this month", value: usd(spentMonth), note: `since ${firstOfMonth}` },
    { name: "Requests today", value: int(requestsToday), note: "that reached a model" },
    {
      name: "Error rate today",
      value: pct(requestsToday === 0 ? 0 : errorsToday / requestsToday),
      note: "of those requests",
    },
  ];
  return (
    <>
      <Alert error={error} />
      <section className="tiles" aria-label="Today">
        {tiles.map((t) => (
          <section key={t.name} className="tile" aria-label={t.name}>
            <span className="tile-name">{t.name}</span>
            <strong className="tile-value" data-testid={t.name.toLowerCase().replaceAll(" ", "-")}>
              {t.value}
            </strong>
            <span className="tile-delta">
              <small>{t.note}</small>
            </span>
          </section>
        ))}
      </section>
      <section className="card">
        <h2>Budgets this month</h2>
        <div className="scroll">
          <table aria-label="Budgets" className="cards">
            <thead>
              <tr>
                <th>Budget</th>
                <th>Spent</th>
                <th>Limit</th>
                <th>Used</th>
              </tr>
            </thead>
            <tbody>
              {budgets.map((b) => (
                <tr key={`${b.kind}:${b.id}`} data-budget={`${b.kind}:${b.id}`}>
                  <td data-label="Budget">
                    {/* one child: the phone's card layout puts each child of a cell in a column of its own */}
                    <span>
                      {b.name} <span className="badge">{b.kind}</span>
                    </span>
                  </td>
                  <td data-label="Spent">{usd(b.spent)}</td>
                  <td data-label="Limit">{usd(b.limit)}</td>
                  <td data-label="Used">
                    <span>
                      <meter min={0} max={1} low={0.75} high={0.9} optimum={0} value={Math.min(1, b.spent / b.limit)} />{" "}
                      {pct(b.spent / b.limit)}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {budgets.length === 0 && <p className="hint">No key or team has a budget.</p>}
      </section>
      <section className="card">
        <h2>Latency by model and deployment</h2>
        <div className="scroll">
          <table aria-label="Latency" className="cards">
            <thead>
              <tr>
                <th>Model</th>
                <th>Deployment</th>
                <th>Requests</th>
                <th>p50</th>
                <th>p95</th>
                <th>First token p50</th>
                <th>First token p95</th>
              </tr>
            </thead>
            <tbody>
              {(latency?.data ?? []).map((r) => (
                <tr key={`${r.model} ${r.deployment}`} data-latency={`${r.model}/${r.deployment}`}>
                  <td data-label="Model">{r.model}</td>
                  <td data-label="Deployment">{r.deployment}</td>
                  <td data-label="Requests">
                    <span>
                      {int(r.requests)}
                      {r.errors > 0 && <small> ({int(r.errors)} failed)</small>}
                    </span>
                  </td>
                  <td data-label="p50">{ms(r.latency_p50_ms)}</td>
                  <td data-label="p95">{ms(r.latency_p95_ms)}</td>
                  <td data-label="First token p50">{ms(r.ttft_p50_ms)}</td>
                  <td data-label="First token p95">{ms(r.ttft_p95_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="hint">
          This instance's last {int(latency?.window ?? 0)} requests; latency of those that succeeded, first token of the
          streams.
        </p>
      </section>
      <section className="card">
        <h2>Latency this month, every instance</h2>
        <div className="scroll">
          <table aria-label="Latency this month" className="cards">
            <thead>
              <tr>
                <th>Model</th>
                <th>Deployment</th>
                <th>Requests</th>
                <th>p50</th>
                <th>p90</th>
                <th>p99</th>
              </tr>
            </thead>
            <tbody>
              {ledgerLatency.map((r) => (
                <tr key={`${r.model} ${r.deployment}`} data-ledger-latency={`${r.model}/${r.deployment}`}>
                  <td data-label="Model">{r.model}</td>
                  <td data-label="Deployment">{r.deployment || "—"}</td>
                  <td data-label="Requests">{int(r.requests)}</td>
                  <td data-label="p50">{ms(r.p50_ms)}</td>
                  <td data-label="p90">{ms(r.p90_ms)}</td>
                  <td data-label="p99">{ms(r.p99_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="hint">
          From the ledger (<code>GET /admin/usage/latency</code>): the requests that succeeded since the 1st (UTC), each
          percentile within its latency bucket (25 ms doubling).
        </p>
      </section>
      <section className="card">
        <h2>Refusals today</h2>
        <div className="scroll">
          <table aria-label="Refusals" className="cards">
            <thead>
              <tr>
                <th>Status</th>
                <th>Type</th>
                <th>Count</th>
                <th>Latest reason</th>
              </tr>
            </thead>
            <tbody>
              {[...reasons.values()]
                .sort((a, b) => b.count - a.count)
                .map((r) => (
                  <tr key={`${r.status} ${r.type}`} data-refusal={`${r.status} ${r.type}`}>
                    <td data-label="Status">{r.status}</td>
                    <td data-label="Type">{r.type}</td>
                    <td data-label="Count">{int(r.count)}</td>
                    <td data-label="Latest reason" className="reason">
                      {r.reason}
                    </td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
        <p className="hint">
          {reasons.size === 0 ? "No request was refused today." : "By status and type,"} from this instance's live log
          (its last 1,000 lines).
        </p>
      </section>
    </>
  );
}
