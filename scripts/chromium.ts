/**
 * Finds the headless browser the dashboard's end-to-end test drives (Debian's `chromium`
 * package; `TURNPIKE_CHROMIUM` names another binary) and, when it is missing and this machine can
 * install packages (root with apt-get), installs it. `bun scripts/chromium.ts` prints what it
 * found; the test command runs it first. A browser that cannot be had is not an error: the test
 * that needs it is reported skipped, by name.
 */
import { existsSync } from "node:fs";

export const CHROMIUM = process.env.TURNPIKE_CHROMIUM || "/usr/bin/chromium";

/** Asynchronous, so the test command can say the install is still running while it takes its minute. */
async function apt(args: string[]): Promise<boolean> {
  const p = Bun.spawn(["apt-get", ...args], {
    stdout: "ignore",
    stderr: "ignore",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return (await p.exited) === 0;
}

/** The browser's path, installed here if need be; null when it cannot be had. */
export async function ensureChromium(log: (line: string) => void = console.log): Promise<string | null> {
  if (existsSync(CHROMIUM)) {
    log(`Chromium: found at ${CHROMIUM}`);
    return CHROMIUM;
  }
  const canInstall = process.getuid?.() === 0 && Bun.which("apt-get") !== null && !process.env.TURNPIKE_CHROMIUM;
  if (canInstall) {
    log("Chromium: not installed; installing it: apt-get install -y chromium");
    // A fresh image has no package lists yet: fetch them only when the first try fails.
    if (!(await apt(["install", "-y", "chromium"])) && (await apt(["update"])))
      await apt(["install", "-y", "chromium"]);
  }
  const ok = existsSync(CHROMIUM);
  log(`Chromium: ${ok ? "found" : "NOT available (the dashboard's browser test will be skipped)"} at ${CHROMIUM}`);
  return ok ? CHROMIUM : null;
}

if (import.meta.main) await ensureChromium();
