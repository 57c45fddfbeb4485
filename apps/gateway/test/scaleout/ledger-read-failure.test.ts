import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootGateway, type Gateway } from "../../src/boot";
import { loadConfig } from "../../src/config/config";
import { SqliteStore } from "../../src/storage/sqlite-store";
import { ADMIN_KEY } from "../harness";
import { memoryLogger } from "../support/memory-logger";

// A ledger read that fails on the SQLite store's reader thread answers the admin call at once,
// with a 500 and one log line that names the cause (beside the refusal line of every 5xx); the next good read is served as before.
const dir = mkdtempSync(join(tmpdir(), "turnpike-read-failure-"));
const path = join(dir, "gateway.db");
const logger = memoryLogger();
let gw: Gateway;
let url: string;

beforeAll(async () => {
  const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", TURNPIKE_ADMIN_KEY: ADMIN_KEY, TURNPIKE_DB: path });
  gw = await bootGateway(config, { store: new SqliteStore(path), firstKey: false, logger });
  gw.app.listen({ port: 0, hostname: "127.0.0.1" });
  url = `http://127.0.0.1:${gw.app.server!.port}`;
});
afterAll(async () => {
  await gw.close();
  rmSync(dir, { recursive: true, force: true });
});

const admin = (p: string) => fetch(url + p, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });

test("a failed read answers with a 500 and one log line naming SQLite's reason", async () => {
  const chart = "/admin/usage/daily?by=model&since=2026-11-19&until=2026-11-23";
  expect((await admin(chart)).status).toBe(200);
  // Another connection removes the rollups under the running gateway: the chart's read now fails.
  const other = new Database(path);
  other.exec("ALTER TABLE usage_rollup RENAME TO usage_rollup_aside");
  logger.lines.length = 0;
  const res = await admin(chart);
  expect(res.status).toBe(500);
  const body = (await res.json()) as { error: { message: string } };
  expect(body.error.message).toBe("Internal error in Turnpike; the request was not completed.");
  const requestId = res.headers.get("x-request-id");
  // One line names the cause; the other is the refusal line every 5xx gets (telemetry/refusal-log.ts).
  const cause = logger.lines.filter((l) => l.includes("the ledger read failed"));
  expect(cause).toHaveLength(1);
  expect(cause[0]).toContain("no such table: usage_rollup");
  expect(cause[0]).toContain(`request_id=${requestId}`);
  expect(logger.lines.filter((l) => l.includes(" refused ") && l.includes(`request_id=${requestId}`))).toHaveLength(1);
  expect(logger.lines).toHaveLength(2);
  // Raw-row listings do not read the rollups; they still answer, and so does the chart once restored.
  expect((await admin("/admin/usage?limit=5")).status).toBe(200);
  other.exec("ALTER TABLE usage_rollup_aside RENAME TO usage_rollup");
  other.close();
  expect((await admin(chart)).status).toBe(200);
});
