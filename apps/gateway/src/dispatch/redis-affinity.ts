import type { RedisLink } from "../storage/redis-link";
import { AFFINITY_TTL_MS, type AffinityStore, MemoryAffinity, type SessionPlace } from "./affinity";

function isPlace(v: unknown): v is SessionPlace {
  if (typeof v !== "object" || v === null) return false;
  const p = v as Record<string, unknown>; // an object: its fields are checked one by one
  return typeof p.deployment === "string" && typeof p.origins === "object" && p.origins !== null;
}

/**
 * Session places shared by every instance through Redis (one key per session, its JSON value,
 * expiring a day after its last move), so a session's next turn finds its deployment on whichever
 * instance it lands. This instance's own map answers while Redis cannot, and keeps what it set:
 * a Redis outage costs affinity across instances, never a request.
 */
export class RedisAffinity implements AffinityStore {
  private readonly local: MemoryAffinity;

  constructor(
    private readonly link: RedisLink,
    now: () => number,
  ) {
    this.local = new MemoryAffinity(now);
  }

  private key(key: string): string {
    return `${this.link.prefix}affinity:${key}`;
  }

  async get(key: string): Promise<SessionPlace | undefined> {
    if (!this.link.up) return this.local.get(key);
    try {
      const raw = await this.link.send("GET", [this.key(key)]);
      if (typeof raw !== "string") return this.local.get(key);
      const place: unknown = JSON.parse(raw);
      return isPlace(place) ? place : undefined;
    } catch {
      return this.local.get(key);
    }
  }

  async set(key: string, place: SessionPlace): Promise<void> {
    await this.local.set(key, place);
    if (!this.link.up) return;
    await this.link.send("SET", [this.key(key), JSON.stringify(place), "PX", String(AFFINITY_TTL_MS)]).catch(() => {});
  }
}
