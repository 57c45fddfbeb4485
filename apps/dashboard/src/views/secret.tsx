import { useState } from "react";

/** A key's secret, shown once (after create or rotate) with a copy button; gone when dismissed. */
export function Secret({ label, secret, onDone }: { label: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(secret);
    setCopied(true);
  };
  return (
    <section className="card secret" aria-label="New secret">
      <p>
        <strong>{label}</strong> — copy it now: it is shown only once.
      </p>
      <code data-testid="secret">{secret}</code>
      <div className="row">
        <button type="button" onClick={copy}>
          {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}
