/** The limit fields of a key as the forms edit them: text in, the admin API's values out. */
export interface LimitInputs {
  models: string;
  rpm: string;
  tpm: string;
  budget_usd: string;
}

export const EMPTY_LIMITS: LimitInputs = { models: "", rpm: "", tpm: "", budget_usd: "" };

/** Empty = no limit (null); the gateway checks the numbers and names the field it refuses. */
export function limitFields(l: LimitInputs) {
  const num = (s: string) => (s.trim() === "" ? null : Number(s));
  const models = l.models
    .split(",")
    .map((m) => m.trim())
    .filter(Boolean);
  return { models: models.length ? models : null, rpm: num(l.rpm), tpm: num(l.tpm), budget_usd: num(l.budget_usd) };
}

export function limitInputs(k: {
  models: string[] | null;
  rpm: number | null;
  tpm: number | null;
  budget_usd: number | null;
}): LimitInputs {
  const str = (n: number | null) => (n === null ? "" : String(n));
  return { models: (k.models ?? []).join(", "), rpm: str(k.rpm), tpm: str(k.tpm), budget_usd: str(k.budget_usd) };
}
