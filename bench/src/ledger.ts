/**
 * The ledger at scale (issue 46): for each store and ledger size, fills the usage table with
 * scripts/seed-ledger.ts, measures the gateway's start-up (wall time to its first `/health`, and
 * the CPU its process spent by then), then runs scripts/event-loop-hold.ts's `ledger:` rows: each
 * admin read the dashboard makes, its time and the longest `/health` answer while it ran (a worker
 * thread asks every 5 ms).
 *
 *   bun src/ledger.ts [--rows 100000,1000000] [--stores sqlite,postgres] [--database-url URL] [--dir /tmp]
 *
 * PostgreSQL: `--database-url` names a server whose `turnpike_bench_ledger` database is made
 * (and dropped) here (default postgres://postgres@127.0.0.1:5432/postgres). Not a test: it takes
 * minutes per million rows (the seed) and its figures depend on the machine.
 */
import { SQL } from "bun";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
};
const sizes = opt("rows", "100000,1000000").split(",").map(Number);
const stores = opt("stores", "sqlite,postgres").split(",");
const serverUrl = opt("database-url", "postgres://postgres@127.0.0.1:5432/postgres");
const dir = join(opt("dir", "/tmp"), "turnpike-bench-ledger");
const root = join(import.meta.dir, "../..");
const port = 18470;
const DB_NAME = "turnpike_bench_ledger";

function dbUrl(): string {
  const u = new URL(serverUrl);
  u.pathname = `/${DB_NAME}`;
  return u.toString();
}

async function run(cmd: string[], cwd = root): Promise<string> {
  const p = Bun.spawn(cmd, { cwd, stdout: "pipe", stderr: "inherit", env: process.env });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(" ")} failed`);
  return out;
}

/** CPU seconds a process has spent (user + system), from /proc (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Starts the gateway on the seeded store; its time and CPU to the first `/health`. */
async function startUp(env: Record<string, string>): Promise<{ ms: number; cpu: number }> {
  const t0 = performance.now();
  const proc = Bun.spawn(["bun", "src/main.ts"], {
    cwd: join(root, "apps/gateway"),
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", TURNPIKE_LOG_LEVEL: "warn", ...env },
    stdout: "ignore",
    stderr: "ignore",
  });
  try {
    for (let i = 0; i < 1200; i++) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break;
      } catch {}
      await Bun.sleep(25);
    }
    return { ms: performance.now() - t0, cpu: cpuSeconds(proc.pid) };
  } finally {
    proc.kill();
    await proc.exited;
  }
}

mkdirSync(dir, { recursive: true });
const report: string[] = [];
for (const store of stores) {
  for (const rows of sizes) {
    let env: Record<string, string>;
    let seedTarget: string[];
    if (store === "sqlite") {
      const path = join(dir, `ledger-${rows}.db`);
      rmSync(path, { force: true });
      env = { TURNPIKE_DB: path };
      seedTarget = ["--db", path];
    } else {
      const admin = new SQL(serverUrl, { max: 1 });
      await admin.unsafe(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
      await admin.unsafe(`CREATE DATABASE ${DB_NAME}`);
      await admin.close();
      env = { TURNPIKE_DATABASE_URL: dbUrl(), TURNPIKE_JOURNAL_DIR: join(dir, "journal") };
      seedTarget = ["--database-url", dbUrl()];
    }
    // The same start-up on the empty store first: what the ledger's size adds is the difference.
    const empty = await startUp(env);
    const seeded = JSON.parse(
      (await run(["bun", "scripts/seed-ledger.ts", "--rows", String(rows), ...seedTarget])).trim().split("\n").at(-1)!,
    ) as { seconds: number };
    const start = await startUp(env);
    const envArgs = Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
    const table = await run([
      "bun",
      "scripts/event-loop-hold.ts",
      "--only",
      // The machine's own delay first (`(no body)`: no read in flight), then the reads.
      "ledger|no body",
      "--sizes",
      "1",
      "--port",
      String(port),
      ...envArgs,
    ]);
    report.push(
      `### ${store}, ${rows.toLocaleString("en")} rows (seeded in ${seeded.seconds} s)`,
      "",
      `start-up: ${start.ms.toFixed(0)} ms to the first /health, ${(start.cpu * 1000).toFixed(0)} ms of CPU (empty store: ${empty.ms.toFixed(0)} ms, ${(empty.cpu * 1000).toFixed(0)} ms of CPU)`,
      "",
      ...table
        .split("\n")
        .filter((l) => l.startsWith("|"))
        .map((l) => l.replace("| MB |", "| reply MB |").replace("| body took ms |", "| read took ms |")),
      "",
    );
    console.error(report.slice(-18).join("\n"));
  }
}
if (stores.includes("postgres")) {
  const admin = new SQL(serverUrl, { max: 1 });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
  await admin.close();
}
console.log("\n" + report.join("\n"));
