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
