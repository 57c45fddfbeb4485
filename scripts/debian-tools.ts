/**
 * Finds the programs from Debian's packages that some tests drive, and installs a missing one
 * when this machine can install packages (root with apt-get):
 * - `chromium`: the headless browser of the dashboard's, the API page's and sign-on's end-to-end
 *   tests (`TURNPIKE_CHROMIUM` names another binary, and is then never installed);
 * - `prometheus`: its server and `promtool`, which read `/metrics` in `test/ops/prometheus.test.ts`.
 * `bun scripts/debian-tools.ts` prints what it found; the test command runs it first. A program
 * that cannot be had is not an error: the tests that need it are reported skipped, by name.
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

interface Tool {
  /** How the log names it. */
  label: string;
  /** Debian's package. */
  pkg: string;
  /** The files it must provide. */
  paths: string[];
  /** Whether a missing one may be installed. */
  installable: boolean;
  /** What is skipped without it. */
  without: string;
}

/** The tool's first path, installed here if need be; null when it cannot be had. */
async function ensure(tool: Tool, log: (line: string) => void): Promise<string | null> {
  const present = () => tool.paths.every((p) => existsSync(p));
  if (present()) {
    log(`${tool.label}: found at ${tool.paths.join(", ")}`);
    return tool.paths[0]!;
  }
  if (tool.installable && process.getuid?.() === 0 && Bun.which("apt-get") !== null) {
    log(`${tool.label}: not installed; installing it: apt-get install -y ${tool.pkg}`);
    // A fresh image has no package lists yet: fetch them only when the first try fails.
    if (!(await apt(["install", "-y", tool.pkg])) && (await apt(["update"]))) await apt(["install", "-y", tool.pkg]);
  }
  const ok = present();
  log(`${tool.label}: ${ok ? "found" : `NOT available (${tool.without} will be skipped)`} at ${tool.paths.join(", ")}`);
  return ok ? tool.paths[0]! : null;
}

export function ensureChromium(log: (line: string) => void = console.log): Promise<string | null> {
  return ensure(
    {
      label: "Chromium",
      pkg: "chromium",
      paths: [CHROMIUM],
      installable: !process.env.TURNPIKE_CHROMIUM,
      without: "the browser tests",
    },
    log,
  );
}

export function ensurePrometheus(log: (line: string) => void = console.log): Promise<string | null> {
  return ensure(
    {
      label: "Prometheus",
      pkg: "prometheus",
      paths: ["/usr/bin/prometheus", "/usr/bin/promtool"],
      installable: true,
      without: "the Prometheus tests",
    },
    log,
  );
}

if (import.meta.main) await Promise.all([ensureChromium(), ensurePrometheus()]);
