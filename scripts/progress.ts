/**
 * Progress for the test command: each step says what it is doing when it starts, what it is still
 * doing while it runs (the test file a suite is in, or a "still running" line after a quiet
 * stretch) and how long it took, so a long step never looks like a hang.
 */

/**
 * No suite may hang the run: each command gets at most this long. The gateway's suite takes about
 * 4 minutes on an idle 2-core machine; on one whose cores are shared several times over it once
 * passed 15, so the bound is far above that and still leaves the whole run inside CI's 90 minutes.
 */
export const SUITE_TIMEOUT_MS = 30 * 60_000;
/** After this long without a progress line, say the step is still running. */
const QUIET_MS = 15_000;

const since = (t: number) => `${((Date.now() - t) / 1000).toFixed(1)} s`;

/** Runs a synchronous or asynchronous step between a "started" and a "done in N s" line. */
export async function step<T>(label: string, work: () => T | Promise<T>): Promise<T> {
  const t = Date.now();
  console.log(`▶ ${label}…`);
  const quiet = setInterval(() => console.log(`  … ${label}: still running (${since(t)})`), QUIET_MS);
  try {
    return await work();
  } finally {
    clearInterval(quiet);
    console.log(`  ${label}: done in ${since(t)}`);
  }
}

/**
 * Runs a command, keeping its whole output for the summary, and prints a line as it reaches each
 * test file (Bun names the file on stderr as `path/x.test.ts:` before its results) with the time
 * since the start.
 */
export async function run(
  label: string,
  cmd: string[],
  cwd: string,
): Promise<{ code: number; out: string; seconds: number }> {
  const started = Date.now();
  console.log(`▶ ${label}…`);
  let lastLine = Date.now();
  const p = Bun.spawn(cmd, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, FORCE_COLOR: "0" } });
  const killer = setTimeout(() => p.kill(), SUITE_TIMEOUT_MS);
  const quiet = setInterval(() => {
    if (Date.now() - lastLine < QUIET_MS) return;
    lastLine = Date.now();
    console.log(`  … ${label}: still running (${since(started)})`);
  }, 1000);
  const chunks: string[] = [];
  const read = async (stream: ReadableStream<Uint8Array>) => {
    let rest = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      chunks.push(text);
      const lines = (rest + text).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        const file = /^(\S+\.test\.tsx?):$/.exec(line.trim());
        if (file) {
          lastLine = Date.now();
          console.log(`  · ${file[1]} (${since(started)})`);
        }
      }
    }
  };
  await Promise.all([read(p.stdout), read(p.stderr)]);
  const exit = await p.exited;
  clearTimeout(killer);
  clearInterval(quiet);
  let out = chunks.join("");
  const timedOut = Date.now() - started >= SUITE_TIMEOUT_MS;
  if (timedOut) out += `\n${cmd.join(" ")} in ${cwd}: killed after ${SUITE_TIMEOUT_MS / 60_000} minutes`;
  return { code: timedOut ? 1 : exit, out, seconds: (Date.now() - started) / 1000 };
}
