/**
 * The worker half of the SQLite store's checkpoints (sqlite-store.ts): its own connection to the
 * database copies the write-ahead log into it once a second (PASSIVE: it never waits for a writer
 * and no writer waits for it), so the copying and the fsyncs run off the server's thread.
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

/** What the store sends: the database's path and how often to checkpoint. */
export interface CheckpointStart {
  path: string;
  everyMs: number;
}

self.onmessage = (event: MessageEvent<CheckpointStart>) => {
  const db = new Database(event.data.path, { strict: true });
  setInterval(() => {
    try {
      db.exec("PRAGMA wal_checkpoint(PASSIVE);");
    } catch {
      // A checkpoint that could not run (the database busy, or closing) is tried again in a second.
    }
  }, event.data.everyMs);
};
