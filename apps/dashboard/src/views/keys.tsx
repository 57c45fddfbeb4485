import { Alert } from "../alert";
import { type FormEvent, useState } from "react";
import { api, type Key, type KeyWithSecret, usd } from "../api";
import { KeyRow } from "./key-row";
import { LimitFieldset } from "./limit-fields";
import { EMPTY_LIMITS, limitFields } from "./limits";
import { Secret } from "./secret";

/** Keys: create (the secret shown once), list, and per key edit limits, rotate, revoke. */
export function Keys({ keys, reload }: { keys: Key[]; reload: () => Promise<void> }) {
  const [name, setName] = useState("");
  const [limits, setLimits] = useState(EMPTY_LIMITS);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [error, setError] = useState<string | null>(null);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const k = await api<KeyWithSecret>("/admin/keys", { method: "POST", body: { name, ...limitFields(limits) } });
      setSecret({ label: `Secret of "${k.name}" (${k.id})`, value: k.key });
      setName("");
      setLimits(EMPTY_LIMITS);
      await reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <>
      {secret && <Secret label={secret.label} secret={secret.value} onDone={() => setSecret(null)} />}
      <form className="card" onSubmit={create} aria-label="Create a key">
        <h2>New key</h2>
        <label>
          Name
          <input name="name" value={name} onChange={(e) => setName(e.target.value)} required placeholder="ci" />
        </label>
        <LimitFieldset value={limits} onChange={setLimits} />
        <Alert error={error} />
        <button type="submit">Create key</button>
      </form>
      <section className="card">
        <h2>Keys ({keys.length})</h2>
        <div className="scroll">
          <table aria-label="Keys" className="cards">
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Models</th>
                <th>Limits</th>
                <th>Spent this month</th>
                <th>State</th>
                <th>
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <KeyRow
                  key={k.id}
                  k={k}
                  reload={reload}
                  onSecret={(value) => setSecret({ label: `New secret of "${k.name}" (${k.id})`, value })}
                />
              ))}
            </tbody>
          </table>
        </div>
        <p className="hint">
          Spend is this calendar month's (UTC), {usd(keys.reduce((a, k) => a + (k.spent_this_month_usd ?? 0), 0))} over
          all keys.
        </p>
      </section>
    </>
  );
}
