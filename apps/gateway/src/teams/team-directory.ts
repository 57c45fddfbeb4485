import type { KeyRecord, Store } from "../storage/store";
import { type Team, type TeamStore, teamStoreOf } from "./team-store";

/** How long a team read from the store is used before it is read again (another instance's change shows within this). */
const TEAM_TTL_MS = 5_000;

/**
 * The teams as authentication sees them: read from the store, kept a few seconds (a request must
 * not wait on the database for its team), forgotten at once when this instance changes one.
 */
export class TeamDirectory {
  private readonly cache = new Map<string, { team: Team | undefined; until: number }>();

  constructor(
    readonly store: TeamStore,
    private readonly now: () => number,
  ) {}

  async get(id: string): Promise<Team | undefined> {
    const hit = this.cache.get(id);
    if (hit && hit.until > this.now()) return hit.team;
    const team = await this.store.team(id);
    this.cache.set(id, { team, until: this.now() + TEAM_TTL_MS });
    return team;
  }

  /** The team at once when this directory holds it fresh (its entry: the team may be undefined, gone); else undefined. */
  getNow(id: string): { team: Team | undefined } | undefined {
    const hit = this.cache.get(id);
    return hit && hit.until > this.now() ? hit : undefined;
  }

  forget(id: string): void {
    this.cache.delete(id);
  }
}

const directories = new WeakMap<Store, TeamDirectory>();

/** The one team directory of a store (so that the admin API's changes reach authentication at once). */
export function teamDirectory(store: Store, now: () => number): TeamDirectory {
  let dir = directories.get(store);
  if (!dir) {
    dir = new TeamDirectory(teamStoreOf(store), now);
    directories.set(store, dir);
  }
  return dir;
}

const lower = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.min(a, b));

/**
 * A key as requests see it: its own models and limits intersected with its team's. Models: the
 * key's list and the team's both apply (KeyService.allows checks `team.models`); rpm and tpm: the
 * lower of the two; the team's budget is reserved beside the key's at admission (limits/admit.ts);
 * MCP tools: the key's list and the team's both apply (tools/tool-allow-list.ts reads `team.tools`).
 */
export function effectiveKey(key: KeyRecord, team: Team | undefined): KeyRecord {
  const tools = team?.tools ?? null;
  const guardrails = team?.guardrails?.length ? team.guardrails : null;
  if (
    !team ||
    (team.models === null &&
      team.rpm === null &&
      team.tpm === null &&
      team.budget_usd === null &&
      tools === null &&
      guardrails === null)
  )
    return key;
  return {
    ...key,
    rpm: lower(key.rpm, team.rpm),
    tpm: lower(key.tpm, team.tpm),
    team: {
      id: team.id,
      models: team.models,
      budget_usd: team.budget_usd,
      ...(tools ? { tools } : {}),
      ...(guardrails ? { guardrails } : {}),
    },
  };
}

/** The effective key made for a key record, and the team object it was made with. */
const effective = new WeakMap<KeyRecord, { team: Team | undefined; key: KeyRecord }>();

/**
 * {@link effectiveKey}, made once per key record and team object rather than per request: the
 * same object for every request of a key while neither changes (a change to either is a new
 * object: a key's new record, a team read anew), so what is made once per key record further on
 * (its bucket check, its guardrail policies) is made once here too.
 */
export function effectiveKeyOf(key: KeyRecord, team: Team | undefined): KeyRecord {
  const hit = effective.get(key);
  if (hit && hit.team === team) return hit.key;
  const made = effectiveKey(key, team);
  effective.set(key, { team, key: made });
  return made;
}
