/**
 * Builds the dashboard app (`apps/dashboard`, `vite build`) when its build is missing, so that
 * `bun run start` serves `/dashboard` on a fresh checkout. An existing build is used as it is
 * (the start stays fast); `bun run build` at the root rebuilds it. The start script runs this
 * file before the gateway; the dashboard's browser test calls it too.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DASHBOARD_DIST } from "./dashboard";

export function ensureDashboardBuilt(dist: string = DASHBOARD_DIST): { built: boolean } {
  if (existsSync(join(dist, "index.html"))) return { built: false };
  const app = join(dist, "..");
  console.log(`Dashboard: no build at ${dist}; building it (bun run build in ${app})…`);
  const p = Bun.spawnSync(["bun", "run", "build"], { cwd: app, stdout: "inherit", stderr: "inherit" });
  if (p.exitCode !== 0 || !existsSync(join(dist, "index.html"))) {
    throw new Error(`Dashboard build failed (exit ${p.exitCode}); /dashboard will say it is not built. Run \`bun run build\` in ${app} to see why.`);
  }
  return { built: true };
}

if (import.meta.main) {
  try {
    ensureDashboardBuilt();
  } catch (e) {
    // The gateway still starts: the API does not need the page.
    console.error((e as Error).message);
  }
}
