/**
 * Stored Responses-format replies, per key (docs/protocols.md §5.1 `store`,
 * `previous_response_id`): the response object and the conversation up to it (its input items
 * and those of the responses it continued), so that a later request can continue from it by id.
 * Kept in the same store as keys and usage, so that it scales out with them; expired entries
 * are purged.
 */

import type { StoredResponse } from "../vocabulary/stored-response";

/** A stored response as both databases hold it: the two JSON fields as text. */
export interface StoredResponseRow {
  id: string;
  key_id: string;
  model: string;
  response: string;
  input_items: string;
  created_at: string;
  expires_at: string;
}

/** A row back as the record `put` wrote (its columns hold JSON of the record's own types). */
export const fromStoredRow = (r: StoredResponseRow): StoredResponse => ({
  ...r,
  response: JSON.parse(r.response) as Record<string, unknown>,
  input_items: JSON.parse(r.input_items) as unknown[],
});

export interface ResponseStore {
  put(r: StoredResponse): Promise<void>;
  /** The response, if it exists, belongs to this key and has not expired. */
  get(keyId: string, id: string, nowIso: string): Promise<StoredResponse | undefined>;
  /** Deletes it; false when there was none for this key. */
  delete(keyId: string, id: string): Promise<boolean>;
  /** Removes every response that expired before `nowIso`; returns how many. */
  purgeExpired(nowIso: string): Promise<number>;
}
