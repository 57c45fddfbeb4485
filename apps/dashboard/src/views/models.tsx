import { Alert } from "../alert";
import { useEffect, useState } from "react";
import { api, int, type Model } from "../api";

const price = (n: number) => `$${n}`;

/** The catalog with its prices (USD per million tokens). */
export function Models() {
  const [models, setModels] = useState<Model[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<{ data: Model[] }>("/admin/models").then(
      (r) => setModels(r.data),
      (e: Error) => setError(e.message),
    );
  }, []);
  return (
    <section className="card">
      <h2>Model catalog</h2>
      <Alert error={error} />
      <div className="scroll">
        <table aria-label="Models">
          <thead>
            <tr>
              <th>Model</th>
              <th>Vendor</th>
              <th>Input $/M</th>
              <th>Output $/M</th>
              <th>Cache read $/M</th>
              <th>Cache write $/M</th>
              <th>Context</th>
              <th>Max output</th>
            </tr>
          </thead>
          <tbody>
            {models.map((m) => (
              <tr key={m.id}>
                <td>{m.id}</td>
                <td>
                  {m.vendor} <small>({m.protocol})</small>
                </td>
                <td>{price(m.pricing.input_per_mtok)}</td>
                <td>{price(m.pricing.output_per_mtok)}</td>
                <td>{price(m.pricing.cache_read_per_mtok)}</td>
                <td>{price(m.pricing.cache_write_5m_per_mtok)}</td>
                <td>{int(m.context_window)}</td>
                <td>{int(m.max_output_tokens)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
