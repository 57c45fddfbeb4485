import { Alert } from "../alert";
import { useEffect, useState } from "react";
import { api, type Deployment, int } from "../api";

const POLL_MS = 5000;

/** Each deployment's breaker state, failures and latency (where the gateway has deployments). */
export function Health() {
  const [rows, setRows] = useState<Deployment[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const load = () => api<{ data: Deployment[] }>("/admin/deployments").then((r) => setRows(r.data), (e: Error) => setError(e.message));
    void load();
    const timer = setInterval(load, POLL_MS);
    return () => clearInterval(timer);
  }, []);
  return (
    <section className="card">
      <h2>Deployment health</h2>
      <Alert error={error} />
      <div className="scroll">
        <table aria-label="Deployments">
          <thead>
            <tr>
              <th>Model</th>
              <th>Deployment</th>
              <th>Breaker</th>
              <th>Failures</th>
              <th>Latency</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d, i) => (
              <tr key={`${d.model}|${d.deployment ?? i}`}>
                <td>{d.model ?? "—"}</td>
                <td>{d.deployment ?? d.vendor ?? "—"}</td>
                <td>
                  <span className={`badge ${d.state === "closed" ? "active" : d.state === "open" ? "revoked" : "rotating"}`}>{d.state ?? "unknown"}</span>
                </td>
                <td>{int(d.failures ?? 0)}</td>
                <td>{typeof d.latency_ms === "number" ? `${int(Math.round(d.latency_ms))} ms` : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
