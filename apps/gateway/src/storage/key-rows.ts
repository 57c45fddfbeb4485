import { type KeyRecord, withoutEmptyOptionals } from "./store";

/**
 * A key as both databases hold it, and the columns both stores read and write: the list fields
 * are JSON text, everything else is the record's own value.
 */
export interface KeyRow
  extends Omit<KeyRecord, "models" | "model_limits" | "tools" | "team_id" | "user_id" | "guardrails"> {
  team_id: string | null;
  user_id: string | null;
  models: string | null;
  tools: string | null;
  guardrails: string | null;
  model_limits: string | null;
}

export const KEY_COLUMNS = [
  "id",
  "name",
  "hash",
  "prefix",
  "models",
  "rpm",
  "tpm",
  "model_limits",
  "budget_usd",
  "expires_at",
  "prev_hash",
  "prev_valid_until",
  "created_at",
  "updated_at",
  "revoked_at",
  "prompt_cache",
  "tools",
  "team_id",
  "user_id",
  "guardrails",
] as const;

export const toKey = ({ tools, team_id, user_id, guardrails, ...r }: KeyRow): KeyRecord => ({
  ...withoutEmptyOptionals(r),
  // Absent when unset, so a key reads as it did before teams existed.
  ...(team_id ? { team_id } : {}),
  ...(user_id ? { user_id } : {}),
  ...(tools === null ? {} : { tools: JSON.parse(tools) as string[] }), // written by fromKey as JSON of this type
  ...(guardrails ? { guardrails: JSON.parse(guardrails) as string[] } : {}), // written by fromKey as JSON of this type
  models: r.models === null ? null : (JSON.parse(r.models) as string[]), // written by fromKey as JSON of this type
  model_limits: r.model_limits === null ? null : (JSON.parse(r.model_limits) as KeyRecord["model_limits"]), // written by fromKey
});

export const fromKey = ({ team: _effective, ...k }: KeyRecord) => ({
  ...k,
  models: k.models === null ? null : JSON.stringify(k.models),
  model_limits: k.model_limits === null ? null : JSON.stringify(k.model_limits),
  prompt_cache: k.prompt_cache ?? null,
  tools: k.tools ? JSON.stringify(k.tools) : null,
  guardrails: k.guardrails?.length ? JSON.stringify(k.guardrails) : null,
  team_id: k.team_id ?? null,
  user_id: k.user_id ?? null,
});
