import { createHash, randomBytes } from "node:crypto";
import type { KeyRecord, Store } from "../storage/store";

/** What a caller may set on a key (create and update). */
export interface KeyFields {
  name?: string;
  models?: string[] | null;
  rpm?: number | null;
  tpm?: number | null;
  model_limits?: KeyRecord["model_limits"];
  budget_usd?: number | null;
  expires_at?: string | null;
}

export type NewKey = KeyFields & { name: string };

const EDITABLE: readonly (keyof KeyFields)[] = ["name", "models", "rpm", "tpm", "model_limits", "budget_usd", "expires_at"];

export const KEY_PREFIX = "sk-tp-";

/** How long a rotated-out secret keeps working when the caller does not say (1 hour). */
export const DEFAULT_ROTATION_GRACE_SECONDS = 3600;

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

function newSecret(): string {
  return KEY_PREFIX + randomBytes(24).toString("base64url");
}

function newId(): string {
  return "key_" + randomBytes(9).toString("base64url");
}

/** `*` globs of an allow-list as one regular expression. */
function compileAllowList(models: string[]): RegExp {
  const alt = models.map((m) => m.split("*").map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*"));
  return new RegExp(`^(?:${alt.join("|")})$`);
}

interface CachedKey {
  record: KeyRecord;
  allow: RegExp | null;
}

/** Why a presented secret was refused. */
export type AuthResult = { ok: true; key: KeyRecord } | { ok: false; reason: "unknown" | "revoked" | "expired" };

/**
 * Keys: created with a secret shown once, stored as a hash, held in memory so that
 * authentication never touches the store.
 */
export class KeyService {
  /** By hash of the current secret, and of a rotated-out secret still in its grace period. */
  private readonly byHash = new Map<string, CachedKey>();
  private readonly byId = new Map<string, CachedKey>();

  private constructor(private readonly store: Store, private readonly now: () => number) {}

  static async load(store: Store, now: () => number = Date.now): Promise<KeyService> {
    const svc = new KeyService(store, now);
    for (const k of await store.listKeys()) svc.remember(k);
    return svc;
  }

  private remember(record: KeyRecord): void {
    const old = this.byId.get(record.id);
    if (old) {
      this.byHash.delete(old.record.hash);
      if (old.record.prev_hash) this.byHash.delete(old.record.prev_hash);
    }
    const cached = { record, allow: record.models ? compileAllowList(record.models) : null };
    this.byId.set(record.id, cached);
    this.byHash.set(record.hash, cached);
    if (record.prev_hash) this.byHash.set(record.prev_hash, cached);
  }

  get size(): number {
    return this.byId.size;
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  async create(input: NewKey): Promise<{ record: KeyRecord; secret: string }> {
    const secret = newSecret();
    const at = this.iso();
    const record: KeyRecord = {
      id: newId(),
      name: input.name,
      hash: hashSecret(secret),
      prefix: secret.slice(0, KEY_PREFIX.length + 4),
      models: input.models ?? null,
      rpm: input.rpm ?? null,
      tpm: input.tpm ?? null,
      model_limits: input.model_limits ?? null,
      budget_usd: input.budget_usd ?? null,
      expires_at: input.expires_at ?? null,
      prev_hash: null,
      prev_valid_until: null,
      created_at: at,
      updated_at: at,
      revoked_at: null,
    };
    await this.store.createKey(record);
    this.remember(record);
    return { record, secret };
  }

  list(): KeyRecord[] {
    return [...this.byId.values()].map((c) => c.record).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  get(id: string): KeyRecord | undefined {
    return this.byId.get(id)?.record;
  }

  private async save(record: KeyRecord): Promise<KeyRecord> {
    await this.store.updateKey(record);
    this.remember(record);
    return record;
  }

  async update(id: string, fields: KeyFields): Promise<KeyRecord | undefined> {
    const k = this.get(id);
    if (!k) return undefined;
    const patch: KeyFields = {};
    for (const [f, v] of Object.entries(fields) as [keyof KeyFields, unknown][]) {
      if (v !== undefined && EDITABLE.includes(f)) Object.assign(patch, { [f]: v });
    }
    return this.save({ ...k, ...patch, updated_at: this.iso() });
  }

  /** A new secret; the old one keeps working for `graceSeconds` (0 = refused at once). */
  async rotate(id: string, graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS): Promise<{ record: KeyRecord; secret: string } | undefined> {
    const k = this.get(id);
    if (!k || k.revoked_at) return undefined;
    const secret = newSecret();
    const record = await this.save({
      ...k,
      hash: hashSecret(secret),
      prefix: secret.slice(0, KEY_PREFIX.length + 4),
      prev_hash: graceSeconds > 0 ? k.hash : null,
      prev_valid_until: graceSeconds > 0 ? new Date(this.now() + graceSeconds * 1000).toISOString() : null,
      updated_at: this.iso(),
    });
    return { record, secret };
  }

  async revoke(id: string): Promise<KeyRecord | undefined> {
    const k = this.get(id);
    if (!k) return undefined;
    if (k.revoked_at) return k;
    return this.save({ ...k, revoked_at: this.iso(), updated_at: this.iso() });
  }

  /**
   * sha256 of recently presented secrets (a client sends the same key again and again; hashing
   * it every time was a measurable share of a request). Bounded; cleared wholesale when full.
   */
  private readonly recentHashes = new Map<string, string>();

  private hashOf(secret: string): string {
    let hash = this.recentHashes.get(secret);
    if (hash === undefined) {
      hash = hashSecret(secret);
      if (this.recentHashes.size >= 10_000) this.recentHashes.clear();
      this.recentHashes.set(secret, hash);
    }
    return hash;
  }

  /** The live key for a presented secret, or why it is refused. */
  authenticate(secret: string): AuthResult {
    const hash = this.hashOf(secret);
    const cached = this.byHash.get(hash);
    if (!cached) return { ok: false, reason: "unknown" };
    const k = cached.record;
    // Which of the key's two hashes matched (the map lookup found one of them).
    const current = k.hash === hash;
    if (!current) {
      // A rotated-out secret: only within its grace period.
      const graceOk = k.prev_hash !== null && k.prev_valid_until !== null && Date.parse(k.prev_valid_until) > this.now();
      if (!graceOk) return { ok: false, reason: "unknown" };
    }
    if (k.revoked_at !== null) return { ok: false, reason: "revoked" };
    if (k.expires_at !== null && Date.parse(k.expires_at) <= this.now()) return { ok: false, reason: "expired" };
    return { ok: true, key: k };
  }

  /** May this key call this model? (allow-list of ids and `*` globs; none = all) */
  allows(key: KeyRecord, modelId: string): boolean {
    const cached = this.byId.get(key.id);
    return !cached?.allow || cached.allow.test(modelId);
  }
}
