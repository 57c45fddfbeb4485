import { Alert } from "./alert";
import { type FormEvent, useState } from "react";
import { api, ApiError, session } from "./api";

/**
 * Asks for the admin key, checks it against the admin API, and keeps it for this tab only; or,
 * where the gateway has single sign-on, sends the browser to the company's identity provider.
 */
export function SignIn({ onSignedIn, signOn }: { onSignedIn: () => void; signOn: boolean }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      await api("/admin/keys", { key });
      session.set(key);
      onSignedIn();
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401 ? "That is not the admin key." : String((err as Error).message),
      );
    }
  };
  return (
    <form className="card sign-in" onSubmit={submit}>
      <h1>Turnpike</h1>
      <label>
        Admin key
        <input
          type="password"
          autoComplete="off"
          value={key}
          onChange={(e) => setKey(e.target.value)}
          placeholder="sk-admin-…"
          required
        />
      </label>
      <p className="hint">Kept in this browser tab only (session storage); closing the tab signs you out.</p>
      <Alert error={error} />
      <button type="submit">Sign in</button>
      {signOn && (
        <p className="hint">
          Or <a href="/auth/login">sign in with your company account</a>.
        </p>
      )}
    </form>
  );
}
