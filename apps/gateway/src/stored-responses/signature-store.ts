import type { SignatureStore } from "../vocabulary/signature-store";
import { MemorySignatureStore } from "@turnpike/providers";

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
