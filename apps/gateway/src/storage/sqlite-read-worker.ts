/**
 * The worker half of the SQLite store's admin reads (sqlite-reader.ts): its own read-only
 * connection runs a query the store sends and posts the rows back, so a read of a large ledger
 * never holds the server's thread (SQLite in WAL mode lets readers run beside the writer, each
 * reading the last commit before it began).
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

/** What the store sends: first the database's path, then one query at a time. */
export type ReadMessage = { path: string } | { id: number; sql: string; params: (string | number)[] };

/** What the worker answers, by the query's id. */
export type ReadReply = { id: number; rows: unknown[] } | { id: number; error: string };

let db: Database | undefined;

self.onmessage = (event: MessageEvent<ReadMessage>) => {
  const m = event.data;
  if ("path" in m) {
    db = new Database(m.path, { readonly: true, strict: true });
    db.exec("PRAGMA busy_timeout = 5000;");
    return;
  }
  try {
    if (!db) throw new Error("the reader has no database");
    const rows = db.query(m.sql).all(...m.params);
    self.postMessage({ id: m.id, rows } satisfies ReadReply);
  } catch (e) {
    self.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) } satisfies ReadReply);
  }
};
