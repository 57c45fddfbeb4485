import { GatewayError } from "@turnpike/providers";
import type { KeyFields } from "../keys/key-service";
import type { AuditEntry } from "./audit";
import type { KeyRecord } from "../storage/store";
import type { KeyRules, Team } from "./team-store";

const DAY_MS = 86_400_000;

/** `*` globs as one regular expression over whole names. */
const globs = (list: readonly string[]) =>
  new RegExp(
    `^(?:${list
      .map((p) =>
        p
          .split("*")
          .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          .join(".*"),
      )
      .join("|")})$`,
  );

/**
 * Is each entry of `asked` within `granted`? An entry without `*` must match a granted glob; one
 * with `*` must be a granted entry, or start with a granted `…*` entry's prefix (`docs__*` is within
 * `*`, `docs__read*` within `docs__*`), so a glob never reaches past what was granted.
 */
export function withinList(asked: readonly string[], granted: readonly string[]): boolean {
  const re = globs(granted);
  return asked.every((a) =>
    a.includes("*")
      ? granted.some(
          (g) => g === a || (g.endsWith("*") && !g.slice(0, -1).includes("*") && a.startsWith(g.slice(0, -1))),
        )
      : re.test(a),
  );
}

/** A key field over its team's ceiling: 403, naming the field and the ceiling. */
export function overCeiling(field: string, ceiling: string): GatewayError {
  return new GatewayError({
    status: 403,
    type: "permission_error",
    code: "over_team_ceiling",
    param: field,
    message: `${field}: more than this team grants its keys (${ceiling}); only an organisation admin may go past a team's key_ceilings.`,
  });
}

/** The lists a member's key is bounded by: the ceiling's, else the team's own (which also narrows the key when used). */
const grantedList = (team: Team, field: "models" | "tools"): string[] | null =>
  team.key_ceilings?.[field] ?? team[field] ?? null;

/**
 * A new key's fields with the team's defaults filled in where the caller gave none (a member is
 * given the ceiling where there is no default), then checked against the team's ceilings when
 * `bounded` (the caller is not an organisation admin). Throws {@link overCeiling}.
 */
export function applyTeamRules(fields: KeyFields, team: Team, bounded: boolean, now: number): KeyFields {
  const d = team.key_defaults ?? {};
  const c = bounded ? (team.key_ceilings ?? {}) : {};
  const out: KeyFields = { ...fields };
  for (const f of ["models", "tools", "rpm", "tpm", "budget_usd"] as const) {
    const fill = d[f] ?? c[f];
    if (out[f] === undefined && fill !== undefined && fill !== null) (out as Record<string, unknown>)[f] = fill;
  }
  const days = d.lifetime_days ?? c.lifetime_days;
  if (out.expires_at === undefined && days) out.expires_at = new Date(now + days * DAY_MS).toISOString();
  if (bounded) checkCeilings(out, team, now);
  return out;
}

/**
 * Refuses a field past the team's ceiling (for a key made, or a key's fields changed, by someone
 * other than an organisation admin). Tools need a grant: with no `tools` ceiling and no team
 * `tools` list, a bounded caller's key gets no MCP tool (they run on the operator's credentials).
 */
export function checkCeilings(f: KeyFields, team: Team, now: number): void {
  const c = team.key_ceilings ?? {};
  for (const field of ["models", "tools"] as const) {
    const granted = grantedList(team, field);
    const asked = f[field];
    if (asked === undefined) continue;
    if (granted === null) {
      if (field === "tools" && asked !== null && asked.length > 0)
        throw overCeiling("tools", "no MCP tool is granted to this team's keys; an admin sets key_ceilings.tools");
      continue;
    }
    // null means every model (or, for tools, none): only the first is past a list.
    if (asked === null ? field === "models" : !withinList(asked, granted))
      throw overCeiling(field, `at most ${JSON.stringify(granted)}`);
  }
  for (const field of ["rpm", "tpm", "budget_usd"] as const) {
    const max = c[field];
    const asked = f[field];
    if (max === undefined || max === null || asked === undefined) continue;
    if (asked === null || asked > max) throw overCeiling(field, `at most ${max}`);
  }
  const days = c.lifetime_days;
  if (days && f.expires_at !== undefined) {
    const latest = now + days * DAY_MS;
    if (f.expires_at === null || Date.parse(f.expires_at) > latest)
      throw overCeiling("expires_at", `at most ${days} days from now, ${new Date(latest).toISOString()}`);
  }
}

/** Where team defaults go past the team's own ceilings: the first such field's name, for a 400. */
export function defaultsProblem(d: KeyRules | null | undefined, c: KeyRules | null | undefined): string | undefined {
  if (!d || !c) return undefined;
  for (const field of ["models", "tools"] as const) {
    const dv = d[field];
    const cv = c[field];
    if (dv && cv && !withinList(dv, cv)) return field;
  }
  for (const field of ["rpm", "tpm", "budget_usd", "lifetime_days"] as const) {
    const dv = d[field];
    const cv = c[field];
    if (dv != null && cv != null && dv > cv) return field;
  }
  return undefined;
}

/** A store of keys, as far as ending a member's keys goes. */
export interface KeyRevoker {
  list(): Promise<KeyRecord[]>;
  revoke(id: string): Promise<KeyRecord | undefined>;
}

/**
 * Revokes the live keys a user (or a named token) made in one team: a key does not outlive its
 * maker's membership. Answers the revoked keys, for the audit log.
 */
export async function revokeMemberKeys(keys: KeyRevoker, ownerId: string, teamId: string): Promise<KeyRecord[]> {
  const mine = (await keys.list()).filter(
    (k) => k.user_id === ownerId && k.revoked_at === null && k.team_id === teamId,
  );
  const out: KeyRecord[] = [];
  for (const k of mine) {
    const r = await keys.revoke(k.id);
    if (r) out.push(r);
  }
  return out;
}

/** The audit record of a key revoked because its maker left its team (or was removed). */
export const keyEnded = (k: KeyRecord): AuditEntry => ({
  action: "key.revoke",
  target: k.id,
  after: {
    id: k.id,
    team_id: k.team_id ?? null,
    user_id: k.user_id ?? null,
    revoked_at: k.revoked_at,
    reason: "maker left",
  },
});
