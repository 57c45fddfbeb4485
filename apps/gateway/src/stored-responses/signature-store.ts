import { MemorySignatureStore } from "@turnpike/providers";

/**
 * Thought signatures of generateContent tool calls, by tool-call id (docs/protocols.md §3.7):
 * stored when a call is generated, put back when a client replays it. Async so that a shared
 * store fits; the converters are synchronous, so a request reads the ids it needs up front
 * ({@link SignatureStore.getMany}) and the reply's new signatures are written as they come.
 */
export interface SignatureStore {
  getMany(toolCallIds: readonly string[]): Promise<Map<string, string>>;
  set(toolCallId: string, signature: string): Promise<void>;
}

/** The in-process store: a bounded LRU. */
export class MemorySignatures implements SignatureStore {
  private readonly lru: MemorySignatureStore;

  constructor(maxEntries = 10_000) {
    this.lru = new MemorySignatureStore(maxEntries);
  }

  getMany(toolCallIds: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const id of toolCallIds) {
      const s = this.lru.get(id);
      if (s !== undefined) out.set(id, s);
    }
    return Promise.resolve(out);
  }

  set(toolCallId: string, signature: string): Promise<void> {
    this.lru.set(toolCallId, signature);
    return Promise.resolve();
  }
}
