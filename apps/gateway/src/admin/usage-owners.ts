import type { KeyRecord, UsageAggregate } from "../storage/store";
import { nanoDollars } from "../vocabulary/money";

/** Who a key's usage is counted under: its team, or the user (or admin token) that made it. */
export type Owner = "team" | "user";
export const OWNERS: readonly Owner[] = ["team", "user"];

/** The name a key made by an administrator (no user) is counted under. */
export const NO_USER = "(admin)";

const SUMS = [
  "requests",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "cost_usd",
] as const;

/**
 * Aggregates grouped by key (and model or day) folded into one row per team or user (and the
 * same model or day): the ledger's rows name only the key, so its team and maker are looked up
 * in the key directory. A key the directory no longer holds counts under `null`.
 */
export function foldByOwner(
  rows: readonly UsageAggregate[],
  keys: ReadonlyMap<string, KeyRecord>,
  owner: Owner,
): (Omit<UsageAggregate, "key_id"> & { team_id?: string | null; user_id?: string | null })[] {
  const out = new Map<string, Omit<UsageAggregate, "key_id"> & { team_id?: string | null; user_id?: string | null }>();
  for (const { key_id, ...r } of rows) {
    const k = key_id === undefined ? undefined : keys.get(key_id);
    const id = owner === "team" ? (k?.team_id ?? null) : k ? (k.user_id ?? NO_USER) : null;
    const slot = JSON.stringify([id, r.model ?? null, r.day ?? null]);
    const have = out.get(slot);
    if (!have) {
      out.set(slot, { ...(owner === "team" ? { team_id: id } : { user_id: id }), ...r });
      continue;
    }
    for (const f of SUMS) have[f] += r[f];
  }
  return [...out.values()].map((r) => ({ ...r, cost_usd: nanoDollars(r.cost_usd) }));
}
