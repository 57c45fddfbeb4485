import type { RedisLink } from "../storage/redis-link";
import { MemorySignatures } from "./signature-store";
import type { SignatureStore } from "../vocabulary/signature-store";

/** How long a thought signature is kept in Redis: a working day of an agent session and more. */
const KEEP_S = 24 * 3600;

/**
 * Thought signatures shared by every instance: kept in this instance's LRU and in Redis, so that
 * the turn that replays a tool call finds its signature on whichever instance it lands. Reads
 * look in the LRU first and ask Redis only for what it lacks (one MGET); a Redis that cannot
 * answer costs the signature, never the request (the converter then sends the documented
 * placeholder, docs/protocols.md §3.7).
 */
export class RedisSignatures implements SignatureStore {
  private readonly local = new MemorySignatures(10_000);

  constructor(private readonly link: RedisLink) {}

  private key(toolCallId: string): string {
    return `${this.link.prefix}sig:${toolCallId}`;
  }

  async getMany(toolCallIds: readonly string[]): Promise<Map<string, string>> {
    const found = await this.local.getMany(toolCallIds);
    const missing = toolCallIds.filter((id) => !found.has(id));
    if (missing.length === 0 || !this.link.up) return found;
    try {
      const values = (await this.link.send(
        "MGET",
        missing.map((id) => this.key(id)),
      )) as (string | null)[]; // MGET: a value or null per key
      missing.forEach((id, i) => {
        const v = values[i];
        if (typeof v === "string") found.set(id, v);
      });
    } catch {
      // Redis went away: the signatures this instance has are all there is.
    }
    return found;
  }

  async set(toolCallId: string, signature: string): Promise<void> {
    await this.local.set(toolCallId, signature);
    if (!this.link.up) return;
    await this.link.send("SET", [this.key(toolCallId), signature, "EX", String(KEEP_S)]).catch(() => {});
  }
}
