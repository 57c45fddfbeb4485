/**
 * The id a team's spend is kept under in the spend store, beside its keys' ids: every request of
 * a key in a team counts under both (limits/admit.ts), so a team's budget reads one counter.
 */
export function teamSpendId(teamId: string): string {
  return `team:${teamId}`;
}

/** A month's ledger sums per key (with the key's team) as spend per budget id: each key's, and each team's. */
export function spendByBudget(
  rows: readonly { key_id: string; team_id: string | null; cost: number }[],
): Map<string, number> {
  const spend = new Map<string, number>();
  for (const r of rows) {
    spend.set(r.key_id, r.cost);
    if (r.team_id) {
      const id = teamSpendId(r.team_id);
      spend.set(id, (spend.get(id) ?? 0) + r.cost);
    }
  }
  return spend;
}
