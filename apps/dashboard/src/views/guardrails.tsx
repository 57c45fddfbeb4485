import { Alert } from "../alert";
import { useEffect, useState } from "react";
import { api, int } from "../api";

/** One row of `GET /admin/guardrails`: counts only, never a value. */
interface Detection {
  policy: string;
  category: string;
  action: string;
  dry_run: boolean;
  key_id: string;
  requests: number;
  detections: number;
}

const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** What the guardrail policies found over a range of days: totals by category, then by policy and key. */
export function Guardrails({ names }: { names: Map<string, string> }) {
  const [since, setSince] = useState(day(Date.now() - 13 * DAY_MS));
  const [until, setUntil] = useState(day(Date.now()));
  const [rows, setRows] = useState<Detection[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    api<{ data: Detection[] }>(`/admin/guardrails?since=${since}&until=${until}`).then(
      (r) => setRows(r.data),
      (e: Error) => setError(e.message),
    );
  }, [since, until]);
  const byCategory = new Map<string, number>();
  for (const r of rows) byCategory.set(r.category, (byCategory.get(r.category) ?? 0) + r.detections);
  return (
    <section className="card">
      <h2>Guardrail detections</h2>
      <form className="row" aria-label="Guardrails range" onSubmit={(e) => e.preventDefault()}>
        <label>
          From
          <input type="date" name="since" value={since} onChange={(e) => setSince(e.target.value)} />
        </label>
        <label>
          To
          <input type="date" name="until" value={until} onChange={(e) => setUntil(e.target.value)} />
        </label>
      </form>
      <Alert error={error} />
      <ul className="tallies" aria-label="Detections by category">
        {[...byCategory].map(([category, n]) => (
          <li key={category}>
            <strong>{int(n)}</strong> {category}
          </li>
        ))}
      </ul>
      <div className="scroll">
        <table aria-label="Guardrail detections" className="cards">
          <thead>
            <tr>
              <th>Policy</th>
              <th>Category</th>
              <th>Action</th>
              <th>Key</th>
              <th>Requests</th>
              <th>Values found</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.policy}/${r.category}/${r.action}/${r.dry_run}/${r.key_id}`}>
                <td data-label="Policy">{r.policy}</td>
                <td data-label="Category">{r.category}</td>
                <td data-label="Action">{r.dry_run ? `${r.action} (dry run)` : r.action}</td>
                <td data-label="Key">{names.get(r.key_id) ?? r.key_id}</td>
                <td data-label="Requests">{int(r.requests)}</td>
                <td data-label="Values found">{int(r.detections)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && !error && <p className="hint">No guardrail detections in this range.</p>}
    </section>
  );
}
