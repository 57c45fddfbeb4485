import { Alert } from "../alert";
import { type FormEvent, useState } from "react";
import { api, type Key, type KeyWithSecret, int, usd } from "../api";
import { LimitFieldset } from "./limit-fields";
import { limitFields, limitInputs } from "./limits";

type Mode = "view" | "edit" | "rotate" | "revoke";

function state(k: Key): string {
  if (k.revoked_at) return "revoked";
  if (k.expires_at && Date.parse(k.expires_at) < Date.now()) return "expired";
  if (k.previous_secret_valid_until && Date.parse(k.previous_secret_valid_until) > Date.now()) return "rotating";
  return "active";
}

const limit = (n: number | null, unit: string) => (n === null ? null : `${int(n)} ${unit}`);

/** One key, and in place of its row's actions the form of the action picked (edit, rotate, revoke). */
export function KeyRow({
  k,
  reload,
  onSecret,
}: {
  k: Key;
  reload: () => Promise<void>;
  onSecret: (secret: string) => void;
}) {
  const [mode, setMode] = useState<Mode>("view");
  const [limits, setLimits] = useState(limitInputs(k));
  const [grace, setGrace] = useState("3600");
  const [error, setError] = useState<string | null>(null);
  const act = async (fn: () => Promise<void>) => {
    setError(null);
    try {
      await fn();
      setMode("view");
      await reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const save = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => void (await api(`/admin/keys/${k.id}`, { method: "PATCH", body: limitFields(limits) })));
  };
  const rotate = (e: FormEvent) => {
    e.preventDefault();
    void act(async () =>
      onSecret(
        (
          await api<KeyWithSecret>(`/admin/keys/${k.id}/rotate`, {
            method: "POST",
            body: { grace_seconds: Number(grace) },
          })
        ).key,
      ),
    );
  };
  const revoke = () => act(async () => void (await api(`/admin/keys/${k.id}`, { method: "DELETE" })));
  const s = state(k);
  const limitText = [limit(k.rpm, "rpm"), limit(k.tpm, "tpm"), k.budget_usd === null ? null : `${usd(k.budget_usd)}/mo`]
    .filter(Boolean)
    .join(", ");
  return (
    <>
      <tr data-key-id={k.id}>
        <td data-label="Name">{k.name}</td>
        <td data-label="Key">
          <span>
            <code>{k.prefix}…</code>
            <br />
            <small>{k.id}</small>
          </span>
        </td>
        <td data-label="Models">{k.models ? k.models.join(", ") : "all"}</td>
        <td data-label="Limits">{limitText || "none"}</td>
        <td data-label="Spent">{usd(k.spent_this_month_usd ?? 0)}</td>
        <td data-label="State">
          <span className={`badge ${s}`}>{s}</span>
        </td>
        <td className="actions" data-label="Actions">
          {!k.revoked_at && (
            <div className="buttons">
              <button type="button" className="secondary" onClick={() => setMode(mode === "edit" ? "view" : "edit")}>
                Edit limits
              </button>
              <button
                type="button"
                className="secondary"
                onClick={() => setMode(mode === "rotate" ? "view" : "rotate")}
              >
                Rotate
              </button>
              <button type="button" className="danger" onClick={() => setMode(mode === "revoke" ? "view" : "revoke")}>
                Revoke
              </button>
            </div>
          )}
        </td>
      </tr>
      {mode !== "view" && (
        <tr className="expanded">
          <td colSpan={7}>
            {mode === "edit" && (
              <form onSubmit={save} aria-label={`Edit limits of ${k.name}`}>
                <LimitFieldset value={limits} onChange={setLimits} />
                <button type="submit">Save limits</button>
              </form>
            )}
            {mode === "rotate" && (
              <form onSubmit={rotate} aria-label={`Rotate ${k.name}`} className="row">
                <label>
                  Old secret keeps working for (seconds)
                  <input
                    name="grace_seconds"
                    type="number"
                    min={0}
                    max={2592000}
                    value={grace}
                    onChange={(e) => setGrace(e.target.value)}
                  />
                </label>
                <button type="submit">Rotate now</button>
              </form>
            )}
            {mode === "revoke" && (
              <div className="row">
                <span>Revoke "{k.name}"? It is refused at once.</span>
                <button type="button" className="danger" onClick={revoke}>
                  Confirm revoke
                </button>
              </div>
            )}
            <Alert error={error} />
          </td>
        </tr>
      )}
    </>
  );
}
