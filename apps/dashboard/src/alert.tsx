/** An error the gateway gave (its own message), announced to screen readers; nothing when there is none. */
export function Alert({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {error}
    </p>
  );
}
