/**
 * Finds the PostgreSQL and Redis the scale-out tests use (`TURNPIKE_TEST_DATABASE_URL`, default
 * postgres://postgres@127.0.0.1:5432/postgres; `TURNPIKE_TEST_REDIS_URL`, default
 * redis://127.0.0.1:6379) and, when one is not answering on this machine and its server is
 * installed here, starts it. `bun scripts/services.ts` prints what it found; the test command
 * runs it first. A server that stays unreachable is not an error: its tests are reported skipped.
 */
import { connect } from "node:net";

const DATABASE_URL = process.env.TURNPIKE_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.TURNPIKE_TEST_REDIS_URL || "redis://127.0.0.1:6379";

function answers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once("connect", () => done(true));
    s.once("error", () => done(false));
  });
}

const isLocal = (host: string) => host === "127.0.0.1" || host === "localhost" || host === "::1";

function which(cmd: string): boolean {
  return Bun.spawnSync(["sh", "-c", `command -v ${cmd}`]).exitCode === 0;
}

/** The installed PostgreSQL clusters' `<version> <name>` (Debian's pg_lsclusters). */
function clusters(): string[] {
  const out = Bun.spawnSync(["pg_lsclusters", "--no-header"]).stdout.toString();
  return out
    .split("\n")
    .map((l) => l.trim().split(/\s+/).slice(0, 2).join(" "))
    .filter((l) => /^\d+ \S+$/.test(l));
}

interface Service {
  name: string;
  url: string;
  start: () => string[][];
}

const SERVICES: Service[] = [
  {
    name: "PostgreSQL",
    url: DATABASE_URL,
    start: () =>
      which("pg_ctlcluster")
        ? clusters().map((c) => ["pg_ctlcluster", "--skip-systemctl-redirect", ...c.split(" "), "start"])
        : [],
  },
  {
    name: "Redis",
    url: REDIS_URL,
    start: () => {
      if (!which("redis-server")) return [];
      const port = new URL(REDIS_URL).port || "6379";
      return [
        [
          "redis-server",
          "--daemonize",
          "yes",
          "--bind",
          "127.0.0.1",
          "-::1",
          "--port",
          port,
          "--save",
          "",
          "--appendonly",
          "no",
        ],
      ];
    },
  },
];

/** Finds (or starts) each server; returns which answer. */
export async function ensureServices(log: (line: string) => void = console.log): Promise<Record<string, boolean>> {
  const found: Record<string, boolean> = {};
  for (const s of SERVICES) {
    const u = new URL(s.url);
    const port = Number(u.port || (s.name === "Redis" ? 6379 : 5432));
    let up = await answers(u.hostname, port);
    if (!up && isLocal(u.hostname)) {
      for (const cmd of s.start()) {
        log(`${s.name}: not answering at ${u.hostname}:${port}; starting it: ${cmd.join(" ")}`);
        Bun.spawnSync(cmd, { stdout: "ignore", stderr: "ignore" });
      }
      for (let i = 0; i < 20 && !up; i++) {
        up = await answers(u.hostname, port);
        if (!up) await Bun.sleep(250);
      }
    }
    log(`${s.name}: ${up ? "found" : "NOT reachable (its tests will be skipped)"} at ${u.hostname}:${port}`);
    found[s.name] = up;
  }
  return found;
}

if (import.meta.main) await ensureServices();
