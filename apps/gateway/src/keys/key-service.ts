import { KEY_PREFIX } from "../vocabulary/key-prefix";
import { createHash, randomBytes } from "node:crypto";
import type { KeyDirectory } from "./key-directory";
import type { KeyRecord } from "../storage/store";

/** What a caller may set on a key (create and update). */
export interface KeyFields {
  name?: string;
  models?: string[] | null;
  rpm?: number | null;
  tpm?: number | null;
  model_limits?: KeyRecord["model_limits"];
  budget_usd?: number | null;
  expires_at?: string | null;
  prompt_cache?: KeyRecord["prompt_cache"];
  tools?: string[] | null;
  guardrails?: string[] | null;
  team_id?: string | null;
  user_id?: string | null;
}

export type NewKey = KeyFields & { name: string };

const EDITABLE: readonly (keyof KeyFields)[] = [
  "name",
  "models",
  "rpm",
  "tpm",
  "model_limits",
  "budget_usd",
  "expires_at",
  "prompt_cache",
  "tools",
  "guardrails",
];

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
  const alt = models.map((m) =>
    m
      .split("*")
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*"),
  );
  return new RegExp(`^(?:${alt.join("|")})$`);
}

/** Why a presented secret was refused. */
export type AuthResult = { ok: true; key: KeyRecord } | { ok: false; reason: "unknown" | "revoked" | "expired" };

/**
 * Key policy over a {@link KeyDirectory}: secrets made and shown once, stored as a hash;
 * rotation with a grace period; revocation; expiry; model allow-lists.
 */
export class KeyService {
  /** Compiled allow-lists by record (a changed key is a new record object). */
  private readonly allowLists = new WeakMap<KeyRecord, RegExp | null>();
  /** Compiled team allow-lists, by the list (a cached team keeps the same one). */
  private readonly teamLists = new WeakMap<string[], RegExp>();

  private teamList(models: string[]): RegExp {
    let re = this.teamLists.get(models);
    if (!re) {
      re = compileAllowList(models);
      this.teamLists.set(models, re);
    }
    return re;
  }
  /**
   * sha256 of recently presented secrets (a client sends the same key again and again; hashing
   * it every time was a measurable share of a request). Bounded; cleared wholesale when full.
   */
  private readonly recentHashes = new Map<string, string>();

  constructor(
    readonly directory: KeyDirectory,
    private readonly now: () => number = Date.now,
  ) {}

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
      prompt_cache: input.prompt_cache ?? null,
      ...(input.tools ? { tools: input.tools } : {}),
      ...(input.guardrails?.length ? { guardrails: input.guardrails } : {}),
      ...(input.team_id ? { team_id: input.team_id } : {}),
      ...(input.user_id ? { user_id: input.user_id } : {}),
      prev_hash: null,
      prev_valid_until: null,
      created_at: at,
      updated_at: at,
      revoked_at: null,
    };
    await this.directory.create(record);
    return { record, secret };
  }

  list(): Promise<KeyRecord[]> {
    return this.directory.list();
  }

  get(id: string): Promise<KeyRecord | undefined> {
    return this.directory.byId(id);
  }

  private async save(record: KeyRecord): Promise<KeyRecord> {
    await this.directory.update(record);
    return record;
  }

  async update(id: string, fields: KeyFields): Promise<KeyRecord | undefined> {
    const k = await this.get(id);
    if (!k) return undefined;
    const patch: KeyFields = {};
    for (const [f, v] of Object.entries(fields) as [keyof KeyFields, unknown][]) {
      // filtered by EDITABLE below
      if (v !== undefined && EDITABLE.includes(f)) Object.assign(patch, { [f]: v });
    }
    return this.save({ ...k, ...patch, updated_at: this.iso() });
  }

  /** A new secret; the old one keeps working for `graceSeconds` (0 = refused at once). */
  async rotate(
    id: string,
    graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS,
  ): Promise<{ record: KeyRecord; secret: string } | undefined> {
    const k = await this.get(id);
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
    const k = await this.get(id);
    if (!k) return undefined;
    if (k.revoked_at) return k;
    return this.save({ ...k, revoked_at: this.iso(), updated_at: this.iso() });
  }

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
  async authenticate(secret: string): Promise<AuthResult> {
    const hash = this.hashOf(secret);
    return this.judge(hash, await this.directory.byHash(hash));
  }

  /**
   * The live key for a presented secret at once, where the directory holds its keys in memory;
   * undefined when it is refused or cannot be told without waiting ({@link authenticate} says which).
   */
  liveKeyNow(secret: string): KeyRecord | undefined {
    if (!this.directory.byHashNow) return undefined;
    const hash = this.hashOf(secret);
    const k = this.directory.byHashNow(hash);
    if (!k || k.hash !== hash || k.revoked_at !== null) return undefined;
    if (k.expires_at !== null && Date.parse(k.expires_at) <= this.now()) return undefined;
    return k;
  }

  private judge(hash: string, k: KeyRecord | undefined): AuthResult {
    if (!k) return { ok: false, reason: "unknown" };
    // Which of the key's two hashes matched (the lookup found one of them).
    if (k.hash !== hash) {
      // A rotated-out secret: only within its grace period.
      const graceOk =
        k.prev_hash !== null && k.prev_valid_until !== null && Date.parse(k.prev_valid_until) > this.now();
      if (!graceOk) return { ok: false, reason: "unknown" };
    }
    if (k.revoked_at !== null) return { ok: false, reason: "revoked" };
    if (k.expires_at !== null && Date.parse(k.expires_at) <= this.now()) return { ok: false, reason: "expired" };
    return { ok: true, key: k };
  }

  /** May this key call this model? (allow-list of ids and `*` globs; none = all) */
  allows(key: KeyRecord, modelId: string): boolean {
    // A team's list applies beside the key's own: a model must pass both.
    if (key.team?.models && !this.teamList(key.team.models).test(modelId)) return false;
    if (!key.models) return true;
    let allow = this.allowLists.get(key);
    if (allow === undefined) {
      allow = compileAllowList(key.models);
      this.allowLists.set(key, allow);
    }
    return allow === null || allow.test(modelId);
  }
}
