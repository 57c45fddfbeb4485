/**
 * The operator's commands beside the gateway: `turnpike --version`, `config check`, `migrate` and
 * `backup`, run as the CLI runs them (runCli with an environment), against real files and databases.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import gatewayPackage from "../../package.json" with { type: "json" };
import { runCli } from "../../src/cli";
import { pgDumpCommand } from "../../src/storage/backup";
import { MIGRATIONS, migrateSqlite, SCHEMA_VERSION } from "../../src/storage/migrations";
import { PostgresStore } from "../../src/storage/postgres-store";
import { SqliteStore } from "../../src/storage/sqlite-store";
import type { KeyRecord, UsageRecord } from "../../src/storage/store";
import { freshDatabase, postgresUp } from "../scaleout/servers";

const dir = mkdtempSync(join(tmpdir(), "turnpike-cli-ops-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI with `env`; what it printed, split in lines, and its exit code. */
async function run(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    env,
    fetch: (() => Promise.reject(new Error("no gateway is called by these commands"))) as unknown as typeof fetch, // local commands only
    out: (l) => out.push(...l.split("\n")),
    err: (l) => err.push(...l.split("\n")),
  });
  return { code, out, err };
}

const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const key = (id: string): KeyRecord => ({
  id,
  name: `name ${id}`,
  hash: `hash-${id}`,
  prefix: "sk-tp-abcd",
  models: ["beta-*"],
  rpm: 10,
  tpm: null,
  model_limits: null,
  budget_usd: 12.5,
  expires_at: null,
  prev_hash: null,
  prev_valid_until: null,
  created_at: "2026-11-01T00:00:00.000Z",
  updated_at: "2026-11-01T00:00:00.000Z",
  revoked_at: null,
});

const usage = (request_id: string, key_id: string): UsageRecord => ({
  request_id,
  key_id,
  model: "beta-5",
  endpoint: "chat",
  stream: false,
  input_tokens: 100,
  output_tokens: 20,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: 0.25,
  status: 200,
  upstream_status: 200,
  latency_ms: 12.5,
  aborted: false,
  estimated: false,
  created_at: "2026-11-02T10:00:00.000Z",
});

describe("turnpike --version", () => {
  test("prints the gateway package's version", async () => {
    expect(await run(["--version"])).toEqual({ code: 0, out: [`turnpike ${gatewayPackage.version}`], err: [] });
    expect(gatewayPackage.version).not.toBe("0.0.0");
  });

  test("an unknown option is a usage error (exit 2), not a crash", async () => {
    const r = await run(["--verison"]);
    expect(r.code).toBe(2);
    expect(r.err[0]).toContain("Unknown option '--verison'");
    expect(r.err).toContain("  turnpike --version");
  });
});

describe("turnpike config check [FILE]", () => {
  test("a valid file: exit 0, with what it holds", async () => {
    const ok = file(
      "ok.yaml",
      "models:\n  - id: beta-5\n    deployments:\n      - vendor: beta\n        weight: 2\nrouting:\n  retries: 1\n",
    );
    const r = await run(["config", "check", ok]);
    expect(r).toEqual({ code: 0, out: [`${ok}: valid — 1 model row, 4 vendors, 0 MCP servers.`], err: [] });
  });

  test("mistakes: exit 1, each with file, line and column, path and rule", async () => {
    const bad = file("bad.yaml", "routng:\n  retries: 2\nmodels:\n  - id: beta-5\n    input_per_mtokk: 3\n");
    const r = await run(["config", "check", bad]);
    expect(r.code).toBe(1);
    expect(r.out).toEqual([]);
    expect(r.err).toEqual([
      "config check: 2 mistakes in the configuration:",
      `  ${bad}:1:1: routng: unknown field \`routng\` — did you mean \`routing\`?`,
      `  ${bad}:5:5: models[0].input_per_mtokk: unknown field \`input_per_mtokk\` — did you mean \`input_per_mtok\`?`,
    ]);
  });

  test("YAML that does not parse: the parser's reason at its line and column", async () => {
    const broken = file("broken.yaml", "routing:\n  retries: [1\nmodels: []\n");
    const r = await run(["config", "check", broken]);
    expect(r.code).toBe(1);
    expect(r.err[1]).toMatch(new RegExp(`^  ${broken}:\\d+:\\d+: not valid YAML: `));
  });

  test("a file that is not there: exit 1, saying so", async () => {
    const missing = join(dir, "missing.yaml");
    expect(await run(["config", "check", missing])).toEqual({
      code: 1,
      out: [],
      err: [
        "config check: a mistake in the configuration:",
        `  ${missing}: the config file (TURNPIKE_CONFIG) cannot be read: no such file`,
      ],
    });
  });

  test("without FILE it checks TURNPIKE_CONFIG and the environment, as a start would", async () => {
    const acme = file("acme.yaml", "vendors:\n  acme:\n    protocol: chat\n");
    // Only building the upstreams finds this one: a keyed vendor with nowhere to send its calls.
    const r = await run(["config", "check"], { TURNPIKE_CONFIG: acme, ACME_API_KEY: "k", TURNPIKE_LOG_LEVEL: "loud" });
    expect(r.code).toBe(1);
    expect(r.err.join("\n")).toContain(
      'TURNPIKE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    );
    const routes = await run(["config", "check"], { TURNPIKE_CONFIG: acme, ACME_API_KEY: "k" });
    expect(routes.code).toBe(1);
    expect(routes.err[1]).toBe(
      "  vendor acme: a base URL must be set when ACME_API_KEY is (there is no default base URL for acme).",
    );
  });
});

describe("turnpike migrate", () => {
  test("applies what is missing and names it; again, nothing", async () => {
    const db = join(dir, "migrate.db");
    const old = new Database(db, { create: true });
    migrateSqlite(old, MIGRATIONS.slice(0, 12));
    old.close();
    const r = await run(["migrate"], { TURNPIKE_DB: db });
    expect(r.code).toBe(0);
    expect(r.out).toEqual([
      `${db}: schema version 12 → ${SCHEMA_VERSION}; applied:`,
      ...MIGRATIONS.slice(12).map((m) => `  ${m.version}  ${m.name}`),
    ]);
    expect(await run(["migrate"], { TURNPIKE_DB: db })).toEqual({
      code: 0,
      out: [`${db}: at schema version ${SCHEMA_VERSION}, this build's; nothing to apply.`],
      err: [],
    });
  });

  test("a database newer than this build: exit 1, naming both versions", async () => {
    const db = join(dir, "newer.db");
    const newer = new Database(db, { create: true });
    migrateSqlite(newer, [
      ...MIGRATIONS,
      { version: SCHEMA_VERSION + 1, name: "later", sqlite: "SELECT 1;", postgres: "SELECT 1;" },
    ]);
    newer.close();
    const r = await run(["migrate"], { TURNPIKE_DB: db });
    expect(r.code).toBe(1);
    expect(r.err[0]).toContain(`This database is at schema version ${SCHEMA_VERSION + 1}`);
    expect(r.err[0]).toContain(`reads schema versions up to ${SCHEMA_VERSION}`);
  });
});

describe.skipIf(!postgresUp)("turnpike migrate: PostgreSQL", () => {
  test("a new database gets every migration, named; again, nothing; the URL shown without its password", async () => {
    const db = await freshDatabase();
    try {
      const url = new URL(db.url);
      url.password = "not-shown";
      const r = await run(["migrate"], { TURNPIKE_DATABASE_URL: url.toString() });
      expect(r.code).toBe(0);
      url.password = "";
      expect(r.out).toEqual([
        `${url}: schema version 0 → ${SCHEMA_VERSION}; applied:`,
        ...MIGRATIONS.map((m) => `  ${m.version}  ${m.name}`),
      ]);
      expect(r.out.join("\n")).not.toContain("not-shown");
      expect((await run(["migrate"], { TURNPIKE_DATABASE_URL: db.url })).out).toEqual([
        `${db.url}: at schema version ${SCHEMA_VERSION}, this build's; nothing to apply.`,
      ]);
    } finally {
      await db.drop();
    }
  }, 60_000);
});

describe("turnpike backup PATH: SQLite", () => {
  test("an online copy, taken while the store is open with writes in its WAL, reads back whole", async () => {
    const db = join(dir, "live.db");
    const store = new SqliteStore(db);
    try {
      await store.createKey(key("key_live"));
      await store.insertUsage([usage("req_1", "key_live"), usage("req_2", "key_live")]);
      const target = join(dir, "live-backup.db");
      const r = await run(["backup", target], { TURNPIKE_DB: db });
      expect(r.code).toBe(0);
      expect(r.out[0]).toMatch(
        new RegExp(`^${db} backed up to ${target} \\(\\d+ bytes, schema version ${SCHEMA_VERSION}\\)\\.$`),
      );
      // The store goes on writing after the copy; the copy keeps what it saw.
      await store.insertUsage([usage("req_3", "key_live")]);
      const restored = new SqliteStore(target);
      try {
        expect((await restored.listKeys()).map((k) => [k.id, k.budget_usd])).toEqual([["key_live", 12.5]]);
        expect((await restored.queryUsage({ key_id: "key_live" })).map((u) => u.request_id).sort()).toEqual([
          "req_1",
          "req_2",
        ]);
      } finally {
        await restored.close();
      }
      // An existing file is never overwritten.
      const again = await run(["backup", target], { TURNPIKE_DB: db });
      expect(again.code).toBe(1);
      expect(again.err).toEqual([`backup: ${target} exists already: a backup never overwrites a file`]);
    } finally {
      await store.close();
    }
  });

  test("no database, no PATH: clear refusals", async () => {
    const none = await run(["backup", join(dir, "x.db")], { TURNPIKE_DB: join(dir, "missing.db") });
    expect(none).toEqual({
      code: 1,
      out: [],
      err: [`backup: no SQLite database at ${join(dir, "missing.db")} (TURNPIKE_DB)`],
    });
    expect((await run(["backup"])).code).toBe(2);
  });
});

describe("turnpike backup PATH: PostgreSQL", () => {
  test("pg_dump in the custom format, without owners or grants, the password kept out of the command line", () => {
    expect(pgDumpCommand("postgres://tp:s3cret%21@db.internal:5432/turnpike?sslmode=require", "/b/t.dump")).toEqual({
      argv: [
        "pg_dump",
        "--format=custom",
        "--no-owner",
        "--no-privileges",
        "--quote-all-identifiers",
        "--file=/b/t.dump",
        "--dbname=postgres://tp@db.internal:5432/turnpike?sslmode=require",
      ],
      env: { PGPASSWORD: "s3cret!" },
    });
  });

  const pgDump = Bun.which("pg_dump") && Bun.which("pg_restore");
  test.skipIf(!postgresUp || !pgDump)(
    "a dump restored with pg_restore into a new database holds the keys and usage",
    async () => {
      const source = await freshDatabase();
      const copy = await freshDatabase();
      try {
        const store = await PostgresStore.open(source.url, { max: 2 });
        try {
          await store.createKey(key("key_pg"));
          await store.insertUsage([usage("req_pg", "key_pg")]);
        } finally {
          await store.close();
        }
        const target = join(dir, "pg.dump");
        const r = await run(["backup", target], { TURNPIKE_DATABASE_URL: source.url });
        expect(r.code).toBe(0);
        expect(r.out[0]).toMatch(/^PostgreSQL database backed up to .*pg\.dump \(\d+ bytes, pg_dump custom format/);
        // The restore of docs/operations.md "Backup and restore".
        const restore = Bun.spawnSync(["pg_restore", "--no-owner", "--no-privileges", `--dbname=${copy.url}`, target]);
        expect({ code: restore.exitCode, err: restore.stderr.toString() }).toEqual({ code: 0, err: "" });
        const restored = await PostgresStore.open(copy.url, { max: 2 });
        try {
          expect((await restored.listKeys()).map((k) => k.id)).toEqual(["key_pg"]);
          expect((await restored.queryUsage({ key_id: "key_pg" })).map((u) => u.input_tokens)).toEqual([100]);
        } finally {
          await restored.close();
        }
      } finally {
        await source.drop();
        await copy.drop();
      }
    },
    60_000,
  );
});
