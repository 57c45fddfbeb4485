import { RedisClient, SQL } from "bun";
import { randomBytes } from "node:crypto";

/**
 * The real PostgreSQL and Redis the scale-out tests run against (`TURNPIKE_TEST_DATABASE_URL`,
 * `TURNPIKE_TEST_REDIS_URL`; site/operations/scale-out.md "Running several instances" says how to start both). Each
 * run gets its own database and key prefix, dropped afterwards. A server that cannot be reached
 * makes its tests skip (the test command names them), never pass.
 */
export const TEST_DATABASE_URL =
  process.env.TURNPIKE_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
export const TEST_REDIS_URL = process.env.TURNPIKE_TEST_REDIS_URL || "redis://127.0.0.1:6379";

async function reachable(check: () => Promise<unknown>): Promise<boolean> {
  try {
    await Promise.race([check(), Bun.sleep(3000).then(() => Promise.reject(new Error("timed out")))]);
    return true;
  } catch {
    return false;
  }
}

export const postgresUp = await reachable(async () => {
  const sql = new SQL(TEST_DATABASE_URL, { max: 1, connectionTimeout: 2 });
  try {
    await sql`SELECT 1`;
  } finally {
    await sql.close();
  }
});

export const redisUp = await reachable(async () => {
  const r = new RedisClient(TEST_REDIS_URL, { connectionTimeout: 2000, autoReconnect: false });
  try {
    await r.connect();
    await r.send("PING", []);
  } finally {
    r.close();
  }
});

/** A URL with its database name replaced. */
export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = "/" + db;
  return u.toString();
}

/** A fresh database of its own on the test server; `drop` removes it (and its connections). */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `turnpike_test_${randomBytes(5).toString("hex")}`;
  const admin = new SQL(TEST_DATABASE_URL, { max: 1 });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  return {
    url: withDatabase(TEST_DATABASE_URL, name),
    async drop() {
      const a = new SQL(TEST_DATABASE_URL, { max: 1 });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.close();
      }
    },
  };
}

/** A key prefix of its own on the test Redis; `drop` deletes every key under it. */
export function freshPrefix(): { prefix: string; drop: () => Promise<void> } {
  const prefix = `turnpike-test-${randomBytes(5).toString("hex")}:`;
  return {
    prefix,
    async drop() {
      const r = new RedisClient(TEST_REDIS_URL);
      try {
        await r.connect();
        let cursor = "0";
        do {
          const [next, keys] = (await r.send("SCAN", [cursor, "MATCH", `${prefix}*`, "COUNT", "1000"])) as [
            string,
            string[],
          ]; // SCAN's reply shape
          cursor = next;
          if (keys.length) await r.send("DEL", keys);
        } while (cursor !== "0");
      } finally {
        r.close();
      }
    },
  };
}
