import { randomBytes } from "node:crypto";
import type { Principal } from "./roles";
import type { TeamStore } from "./team-store";

/** One admin write as the audit log keeps it. */
export interface AuditEntry {
  action: string;
  target: string | null;
  before?: unknown;
  after?: unknown;
}

/** Writes of this process, counted: two in the same millisecond still sort in the order made. */
let sequence = 0;

/** A record's id: its time, then this process's count, so ids sort with the log. */
function auditId(at: string): string {
  sequence = (sequence + 1) % 1e9;
  return `aud_${at.replace(/\D/g, "")}_${String(sequence).padStart(9, "0")}_${randomBytes(6).toString("base64url")}`;
}

/** Never a secret or its hash in the log: a key or token shown as the admin API shows it. */
function scrub(v: unknown): unknown {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return v ?? null;
  const { key: _secret, hash: _hash, prev_hash: _prev, secret: _s, ...rest } = v as Record<string, unknown>; // a record of the admin API
  return rest;
}

/** Appends who did what, from where, with the record before and after (append-only). */
export async function recordAudit(
  store: TeamStore,
  who: Principal,
  address: string | null,
  e: AuditEntry,
  now: number,
): Promise<void> {
  const at = new Date(now).toISOString();
  await store.appendAudit({
    id: auditId(at),
    at,
    actor: who.actor,
    address,
    action: e.action,
    target: e.target,
    before: scrub(e.before),
    after: scrub(e.after),
  });
}
