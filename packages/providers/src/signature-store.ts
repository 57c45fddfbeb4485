/**
 * Gemini thought signatures, kept per generated tool-call id (docs/protocols.md §3.7). Chat and
 * messages clients never echo a Gemini signature back, but Gemini 3 rejects a replayed
 * `functionCall` without one; the gateway stores the signature when the call is generated and
 * puts it back when the client replays the call.
 */
export interface SignatureStore {
  get(toolCallId: string): string | undefined;
  set(toolCallId: string, signature: string): void;
}

/**
 * An in-memory LRU `SignatureStore`: the least recently used entry goes first once `maxEntries`
 * is reached. One process only; a multi-instance deployment needs a shared store.
 *
 * @example
 * ```ts
 * const signatures = new MemorySignatureStore(10_000);
 * signatures.set("toolu_01", "EqQB…");
 * signatures.get("toolu_01"); // "EqQB…"
 * ```
 */
export class MemorySignatureStore implements SignatureStore {
  private readonly map = new Map<string, string>();

  constructor(private readonly maxEntries = 10_000) {
    if (maxEntries < 1) throw new RangeError("maxEntries must be at least 1");
  }

  get size(): number {
    return this.map.size;
  }

  get(toolCallId: string): string | undefined {
    const v = this.map.get(toolCallId);
    if (v === undefined) return undefined;
    // Re-insert: a Map iterates in insertion order, so the first key is the least recent.
    this.map.delete(toolCallId);
    this.map.set(toolCallId, v);
    return v;
  }

  set(toolCallId: string, signature: string): void {
    this.map.delete(toolCallId);
    this.map.set(toolCallId, signature);
    while (this.map.size > this.maxEntries) {
      const oldest = this.map.keys().next().value;
      if (oldest === undefined) break;
      this.map.delete(oldest);
    }
  }
}
