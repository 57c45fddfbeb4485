/**
 * Builds the dashboard app (`apps/dashboard`, `vite build`) when its build is missing, so that
 * `bun run start` serves `/dashboard` on a fresh checkout. An existing build is used as it is
 * (the start stays fast); `bun run build` at the root rebuilds it. The start script runs this
 * file before the gateway; the dashboard's browser test calls it too.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DASHBOARD_DIST } from "./dashboard";

/** One JSON line in the log's shape (the gateway's logger is not made yet when this runs). */
function logLine(level: "info" | "error", msg: string, fields: Record<string, string | number | null> = {}): void {
  const line = JSON.stringify({ level, time: new Date().toISOString(), ...fields, msg });
  if (level === "error") console.error(line);
  else console.log(line);
}

export function ensureDashboardBuilt(dist: string = DASHBOARD_DIST): { built: boolean } {
  if (existsSync(join(dist, "index.html"))) return { built: false };
  const app = join(dist, "..");
  logLine("info", `Dashboard: no build at ${dist}; building it (bun run build in ${app})…`);
  // The build's own output is kept, not passed through: the start writes JSON lines only.
  const p = Bun.spawnSync(["bun", "run", "build"], { cwd: app, stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0 || !existsSync(join(dist, "index.html"))) {
    const out = (p.stdout.toString() + p.stderr.toString()).trim().split("\n").slice(-20).join("\n");
    throw new Error(
      `Dashboard build failed (exit ${p.exitCode}); /dashboard will say it is not built. Run \`bun run build\` in ${app} to see why. Its last lines:\n${out}`,
    );
  }
  logLine("info", "Dashboard: built", { dist });
  return { built: true };
}

if (import.meta.main) {
  try {
    ensureDashboardBuilt();
  } catch (e) {
    // The gateway still starts: the API does not need the page.
    logLine("error", (e as Error).message);
  }
}
