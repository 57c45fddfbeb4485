import { Alert } from "../alert";
import { useEffect, useState } from "react";
import { api, type Deployment, int } from "../api";

const ago = (iso: string) => {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  return s < 90 ? `${s} s ago` : s < 5400 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
};

/** A deployment's breaker state in words: what it means for the requests it would get. */
export function explain(d: Deployment): string {
  switch (d.state) {
    case "closed":
      return (d.consecutive_failures ?? 0) > 0
        ? `Serving, after ${d.consecutive_failures} failure${d.consecutive_failures === 1 ? "" : "s"} in a row: more would take it out of rotation for a while.`
        : "Healthy: serving requests.";
    case "open":
      return "Out of rotation: it failed several times in a row, so requests go to other deployments until its cool-down ends.";
    case "half_open":
      return "Being tested: its cool-down is over and the next request to it is a trial; a success puts it back in rotation, a failure takes it out again.";
    default:
      return "State unknown.";
  }
}

const BADGE: Record<string, string> = { closed: "active", open: "revoked", half_open: "rotating" };
const STATE_WORDS: Record<string, string> = { closed: "healthy", open: "out of rotation", half_open: "testing" };

const POLL_MS = 5000;

/** Each deployment's state explained in words, its failures and last error, and its latency. */
export function Health() {
  const [rows, setRows] = useState<Deployment[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const load = () =>
      api<{ data: Deployment[] }>("/admin/deployments").then(
        (r) => setRows(r.data),
        (e: Error) => setError(e.message),
      );
    void load();
    const timer = setInterval(load, POLL_MS);
    return () => clearInterval(timer);
  }, []);
  return (
    <section className="card">
      <h2>Deployment health</h2>
      <Alert error={error} />
      <p className="hint">
        Each deployment has a circuit breaker: after several failures in a row it is taken out of rotation for a
        cool-down, then one request tests it before it serves again.
      </p>
      <div className="scroll">
        <table aria-label="Deployments" className="cards">
          <thead>
            <tr>
              <th>Model</th>
              <th>Deployment</th>
              <th>State</th>
              <th>What it means</th>
              <th>Failures</th>
              <th>Last error</th>
              <th>Latency</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d, i) => (
              <tr key={`${d.model}|${d.deployment ?? i}`}>
                <td data-label="Model">{d.model ?? "—"}</td>
                <td data-label="Deployment">{d.deployment ?? d.vendor ?? "—"}</td>
                <td data-label="State">
                  <span className={`badge ${BADGE[d.state ?? ""] ?? ""}`} title={`breaker ${d.state}`}>
                    {STATE_WORDS[d.state ?? ""] ?? d.state ?? "unknown"}
                  </span>
                </td>
                <td data-label="What it means" className="reason">
                  {explain(d)}
                </td>
                <td data-label="Failures">{int(d.failures ?? 0)}</td>
                <td data-label="Last error" className="reason">
                  {d.last_error ? (
                    <span>
                      {d.last_error}
                      {d.last_failure_at ? <small> ({ago(d.last_failure_at)})</small> : null}
                    </span>
                  ) : (
                    "none"
                  )}
                </td>
                <td data-label="Latency">
                  {typeof d.latency_ms === "number" ? `${int(Math.round(d.latency_ms))} ms` : "—"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
