import { Alert } from "../alert";
import { useEffect, useState } from "react";
import { api } from "../api";

interface AuditRecord {
  id: string;
  at: string;
  actor: string;
  address: string | null;
  action: string;
  target: string | null;
}

/** The newest admin writes: who did what to which record, from where. */
export function Audit() {
  const [records, setRecords] = useState<AuditRecord[]>([]);
  const [action, setAction] = useState("");
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    api<{ data: AuditRecord[] }>(`/admin/audit?limit=200${action ? `&action=${encodeURIComponent(action)}` : ""}`).then(
      (r) => setRecords(r.data),
      (e: Error) => setError(e.message),
    );
  }, [action]);
  return (
    <section className="card">
      <h2>Audit log</h2>
      <form className="row" aria-label="Audit filter" onSubmit={(e) => e.preventDefault()}>
        <label>
          Action
          <input
            name="action"
            value={action}
            placeholder="key.create"
            onChange={(e) => setAction(e.target.value.trim())}
          />
        </label>
      </form>
      <Alert error={error} />
      <div className="scroll">
        <table aria-label="Audit log">
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>Action</th>
              <th>Target</th>
              <th>From</th>
            </tr>
          </thead>
          <tbody>
            {records.map((r) => (
              <tr key={r.id}>
                <td>{r.at.replace("T", " ").slice(0, 19)}</td>
                <td>{r.actor}</td>
                <td>{r.action}</td>
                <td>{r.target ?? "—"}</td>
                <td>{r.address ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {records.length === 0 && !error && <p className="hint">No admin writes yet.</p>}
    </section>
  );
}
