import type { Store } from "../storage/store";
import { PostgresResponseStore } from "./postgres-response-store";
import type { ResponseStore } from "./response-store";
import { SqliteResponseStore } from "./sqlite-response-store";

/** Stored Responses-format replies, in the store's own database (table `responses`). */
export function responseStoreOf(store: Store): ResponseStore {
  const c = store.connection();
  return c.dialect === "sqlite" ? new SqliteResponseStore(c.db) : new PostgresResponseStore(c.sql);
}
