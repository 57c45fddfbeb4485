import { Alert } from "../alert";
import { useEffect, useState } from "react";
import { api, type Daily, int, usd } from "../api";
import { StackedBars } from "../chart";
import { Headline } from "./headline";

const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const asInt = (n: number) => int(Math.round(n));

type By = Daily["by"];

/** Requests, tokens and cost per day (UTC), by model, key, team or user (who made the keys), over a chosen range. */
export function Usage({ names }: { names: Map<string, string> }) {
  const [since, setSince] = useState(day(Date.now() - 13 * DAY_MS));
  const [until, setUntil] = useState(day(Date.now()));
  const [by, setBy] = useState<By>("model");
  // Team and user names for their series (a reader's lists; ids where they cannot be read).
  const [owners, setOwners] = useState<Map<string, string>>(new Map());
  const [data, setData] = useState<Daily | null>(null);
  const [previous, setPrevious] = useState<Daily | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The period just before the chosen one, as long: what the totals are compared with.
  const length = Math.round((Date.parse(until) - Date.parse(since)) / DAY_MS) + 1;
  const prevUntil = day(Date.parse(since) - DAY_MS);
  const prevSince = day(Date.parse(since) - length * DAY_MS);

  useEffect(() => {
    setError(null);
    api<Daily>(`/admin/usage/daily?by=${by}&since=${since}&until=${until}`).then(setData, (e: Error) =>
      setError(e.message),
    );
  }, [since, until, by]);
  useEffect(() => {
    api<Daily>(`/admin/usage/daily?by=model&since=${prevSince}&until=${prevUntil}`).then(setPrevious, () =>
      setPrevious(null),
    );
  }, [prevSince, prevUntil]);
  useEffect(() => {
    if (by !== "team" && by !== "user") return;
    const path = by === "team" ? "/admin/teams" : "/admin/users";
    api<{ data: { id: string; name?: string | null; email?: string }[] }>(path).then(
      (r) => setOwners(new Map(r.data.map((o) => [o.id, o.name ?? o.email ?? o.id]))),
      () => setOwners(new Map()),
    );
  }, [by]);

  const label = (id: string) =>
    by === "key" ? (names.get(id) ?? id) : by === "team" || by === "user" ? (owners.get(id) ?? id) : id;
  const pick = (f: "requests" | "tokens" | "cost_usd") =>
    (data?.series ?? []).map((s) => ({ name: label(s.id), values: s[f] }));
  return (
    <>
      <form className="card row" aria-label="Usage range" onSubmit={(e) => e.preventDefault()}>
        <label>
          From
          <input
            type="date"
            name="since"
            value={since}
            max={until}
            onChange={(e) => e.target.value && setSince(e.target.value)}
          />
        </label>
        <label>
          To
          <input
            type="date"
            name="until"
            value={until}
            min={since}
            onChange={(e) => e.target.value && setUntil(e.target.value)}
          />
        </label>
        <label>
          By
          <select name="by" value={by} onChange={(e) => setBy(e.target.value as By)}>
            {/* the value is one of the options below */}
            <option value="model">model</option>
            <option value="key">key</option>
            <option value="team">team</option>
            <option value="user">user</option>
          </select>
        </label>
      </form>
      <Alert error={error} />
      {data && (
        <>
          <Headline now={data} before={previous} days={length} />
          <div className="charts">
            <StackedBars title="Requests per day" labels={data.days} series={pick("requests")} format={asInt} whole />
            <StackedBars title="Tokens per day" labels={data.days} series={pick("tokens")} format={asInt} whole />
            <StackedBars title="Cost per day" labels={data.days} series={pick("cost_usd")} format={usd} />
          </div>
          <section className="card">
            <div className="scroll">
              <table aria-label="Usage totals" className="cards">
                <thead>
                  <tr>
                    <th>{by}</th>
                    <th>Requests</th>
                    <th>Tokens</th>
                    <th>Cost</th>
                  </tr>
                </thead>
                <tbody>
                  {data.series.map((s) => (
                    <tr key={s.id}>
                      <td data-label={by}>{label(s.id)}</td>
                      <td data-label="Requests">{int(sum(s.requests))}</td>
                      <td data-label="Tokens">{int(sum(s.tokens))}</td>
                      <td data-label="Cost">{usd(sum(s.cost_usd))}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {data.series.length === 0 && <p className="hint">No requests in this range.</p>}
          </section>
        </>
      )}
    </>
  );
}
