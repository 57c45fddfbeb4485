import type { UsageRecord } from "../storage/store";

/**
 * One row of the dashboard's guardrails panel (`GET /admin/guardrails`): how many values a policy
 * found of one category in one key's requests, and in how many requests — never a value (the
 * ledger's `guardrail` note holds none).
 */
export interface DetectionTotal {
  policy: string;
  category: string;
  /** What the policy did (a dry-run policy: what it would have done). */
  action: string;
  dry_run: boolean;
  key_id: string;
  /** Requests in which the policy found this category. */
  requests: number;
  /** Values found in them. */
  detections: number;
}

/** The ledger's guardrail notes summed by policy, category, action, dry run and key; most detections first. */
export function detectionTotals(records: Iterable<Pick<UsageRecord, "key_id" | "guardrail">>): DetectionTotal[] {
  const rows = new Map<string, DetectionTotal>();
  for (const r of records) {
    for (const d of r.guardrail?.detections ?? []) {
      const k = [d.policy, d.category, d.action, d.dry_run, r.key_id].join("\u0000");
      const row = rows.get(k);
      if (row) {
        row.requests++;
        row.detections += d.n;
      } else
        rows.set(k, {
          policy: d.policy,
          category: d.category,
          action: d.action,
          dry_run: d.dry_run,
          key_id: r.key_id,
          requests: 1,
          detections: d.n,
        });
    }
  }
  return [...rows.values()].sort(
    (a, b) =>
      b.detections - a.detections ||
      a.policy.localeCompare(b.policy) ||
      a.category.localeCompare(b.category) ||
      a.key_id.localeCompare(b.key_id),
  );
}
