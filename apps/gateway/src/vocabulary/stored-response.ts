/** A stored Responses-format reply (stored-responses/response-store.ts keeps them; a client format reads one to continue from it). */
export interface StoredResponse {
  /** `resp_…` */
  id: string;
  key_id: string;
  model: string;
  /** The response object as the client received it. */
  response: Record<string, unknown>;
  /** The conversation before this response's output: every input item, earlier turns included. */
  input_items: unknown[];
  created_at: string;
  /** When it is purged (ISO 8601). */
  expires_at: string;
}
