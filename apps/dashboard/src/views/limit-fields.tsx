import type { LimitInputs } from "./limits";

/** The models, rpm, tpm and budget inputs shared by the create and edit forms. */
export function LimitFieldset({ value, onChange }: { value: LimitInputs; onChange: (v: LimitInputs) => void }) {
  const field = (name: keyof LimitInputs, label: string, placeholder: string, type = "number") => (
    <label>
      {label}
      <input
        name={name}
        type={type}
        min={type === "number" ? 0 : undefined}
        step="any"
        value={value[name]}
        placeholder={placeholder}
        onChange={(e) => onChange({ ...value, [name]: e.target.value })}
      />
    </label>
  );
  return (
    <div className="fields">
      {field("models", "Models", "all (or beta-*, gamma-3-pro)", "text")}
      {field("rpm", "Requests / min", "unlimited")}
      {field("tpm", "Tokens / min", "unlimited")}
      {field("budget_usd", "Monthly budget ($)", "none")}
    </div>
  );
}
