import type { SQL } from "bun";
import { unavailable } from "../storage/postgres-errors";
import { fromStoredRow, type ResponseStore, type StoredResponseRow } from "./response-store";
import type { StoredResponse } from "../vocabulary/stored-response";

/** Stored responses in PostgreSQL (table `responses`, migration 2). */
export class PostgresResponseStore implements ResponseStore {
  constructor(private readonly sql: SQL) {}

  async put(r: StoredResponse): Promise<void> {
    const row = { ...r, response: JSON.stringify(r.response), input_items: JSON.stringify(r.input_items) };
    await this
      .sql`INSERT INTO responses ${this.sql(row, "id", "key_id", "model", "response", "input_items", "created_at", "expires_at")}
      ON CONFLICT (id) DO UPDATE SET response = EXCLUDED.response, input_items = EXCLUDED.input_items, expires_at = EXCLUDED.expires_at`.catch(
      unavailable,
    );
  }

  async get(keyId: string, id: string, nowIso: string): Promise<StoredResponse | undefined> {
    const rows: StoredResponseRow[] = await this
      .sql`SELECT * FROM responses WHERE id = ${id} AND key_id = ${keyId} AND expires_at > ${nowIso}`.catch(
      unavailable,
    );
    return rows[0] ? fromStoredRow(rows[0]) : undefined;
  }

  async delete(keyId: string, id: string): Promise<boolean> {
    const rows: unknown[] = await this
      .sql`DELETE FROM responses WHERE id = ${id} AND key_id = ${keyId} RETURNING id`.catch(unavailable);
    return rows.length > 0;
  }

  async purgeExpired(nowIso: string): Promise<number> {
    const rows: unknown[] = await this.sql`DELETE FROM responses WHERE expires_at <= ${nowIso} RETURNING id`.catch(
      unavailable,
    );
    return rows.length;
  }
}
