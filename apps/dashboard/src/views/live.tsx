import { Alert } from "../alert";
import { useEffect, useRef, useState } from "react";
import { api, int, type RequestLine, usd } from "../api";

/** How often the log asks for new requests, and how far before its newest one it looks again. */
const POLL_MS = 2000;
const OVERLAP_MS = 60_000;
const KEEP = 500;

/**
 * Merges a page into the log by request id, newest first. Asking again from a minute before the
 * newest line catches records another instance shipped late with an earlier finish time.
 */
function merge(old: RequestLine[], page: RequestLine[]): RequestLine[] {
  const byId = new Map(old.map((r) => [r.request_id, r]));
  for (const r of page) byId.set(r.request_id, r);
  return [...byId.values()]
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.request_id.localeCompare(a.request_id))
    .slice(0, KEEP);
}

/**
 * The live request log: every finished request as it lands in the ledger, and every request
 * refused before it reached a model, with the reason its client was given (no prompts, no replies).
 */
export function Live({ names }: { names: Map<string, string> }) {
  const [lines, setLines] = useState<RequestLine[]>([]);
  const [paused, setPaused] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const newest = useRef<string | null>(null);

  useEffect(() => {
    if (paused) return;
    let stop = false;
    const poll = async () => {
      const since = newest.current ? `&since=${new Date(Date.parse(newest.current) - OVERLAP_MS).toISOString()}` : "";
      try {
        const page = await api<{ data: RequestLine[] }>(`/admin/requests?limit=200${since}`);
        if (stop) return;
        setError(null);
        setLines((old) => {
          const next = merge(old, page.data);
          newest.current = next[0]?.created_at ?? null;
          return next;
        });
      } catch (e) {
        if (!stop) setError((e as Error).message);
      }
    };
    void poll();
    const timer = setInterval(poll, POLL_MS);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [paused]);

  return (
    <section className="card">
      <div className="row spread">
        <h2>Live request log</h2>
        <button type="button" className="secondary" onClick={() => setPaused(!paused)}>
          {paused ? "Resume" : "Pause"}
        </button>
      </div>
      <Alert error={error} />
      <div className="scroll">
        <table aria-label="Requests" className="cards">
          <thead>
            <tr>
              <th>Finished</th>
              <th>Key</th>
              <th>Model</th>
              <th>Endpoint</th>
              <th>Status</th>
              <th>Latency</th>
              <th>Tokens in / out</th>
              <th>Cost</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {lines.map((r) => (
              <tr key={r.request_id} data-request-id={r.request_id} className={r.refused ? "refused" : undefined}>
                <td data-label="Finished" title={r.request_id}>
                  {new Date(r.created_at).toLocaleTimeString()}
                </td>
                <td data-label="Key">{r.key_id ? (names.get(r.key_id) ?? r.key_id) : "—"}</td>
                <td data-label="Model">{r.model || "—"}</td>
                <td data-label="Endpoint">
                  {r.endpoint}
                  {r.stream ? " (stream)" : ""}
                </td>
                <td data-label="Status">
                  <span>
                    <span className={r.status < 400 ? "badge active" : "badge revoked"}>{r.status}</span>
                    {r.aborted ? " aborted" : ""}
                  </span>
                </td>
                <td data-label="Latency">{int(Math.round(r.latency_ms))} ms</td>
                <td data-label="Tokens in / out">
                  {r.refused
                    ? "—"
                    : r.bytes_in !== undefined
                      ? `${int(r.bytes_in)} B / ${int(r.bytes_out ?? 0)} B`
                      : `${int(r.input_tokens)} / ${int(r.output_tokens)}`}
                </td>
                <td data-label="Cost">{r.refused ? "—" : usd(r.cost_usd)}</td>
                <td data-label="Why" className="reason">
                  {r.refused ? (
                    <span>
                      Refused: {r.reason}
                      {r.error_type ? <small> ({r.error_type})</small> : null}
                    </span>
                  ) : r.status >= 400 ? (
                    "Failed upstream"
                  ) : (
                    ""
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {lines.length === 0 && <p className="hint">No requests yet; new ones appear here as they finish.</p>}
    </section>
  );
}
