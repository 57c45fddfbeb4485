import type { Database } from "bun:sqlite";
import { fromStoredRow, type ResponseStore, type StoredResponseRow } from "./response-store";
import type { StoredResponse } from "../vocabulary/stored-response";

/** Stored responses in the embedded SQLite file (table `responses`, migration 2). */
export class SqliteResponseStore implements ResponseStore {
  constructor(private readonly db: Database) {}

  async put(r: StoredResponse): Promise<void> {
    this.db
      .query(
        "INSERT OR REPLACE INTO responses (id, key_id, model, response, input_items, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      )
      .run(
        r.id,
        r.key_id,
        r.model,
        JSON.stringify(r.response),
        JSON.stringify(r.input_items),
        r.created_at,
        r.expires_at,
      );
  }

  async get(keyId: string, id: string, nowIso: string): Promise<StoredResponse | undefined> {
    const row = this.db
      .query<StoredResponseRow, [string, string, string]>(
        "SELECT * FROM responses WHERE id = ? AND key_id = ? AND expires_at > ?",
      )
      .get(id, keyId, nowIso);
    return row ? fromStoredRow(row) : undefined;
  }

  async delete(keyId: string, id: string): Promise<boolean> {
    return this.db.query("DELETE FROM responses WHERE id = ? AND key_id = ?").run(id, keyId).changes > 0;
  }

  async purgeExpired(nowIso: string): Promise<number> {
    return this.db.query("DELETE FROM responses WHERE expires_at <= ?").run(nowIso).changes;
  }
}
