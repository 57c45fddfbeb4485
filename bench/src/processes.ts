/**
 * The processes of a run, each pinned to its core with `taskset` (util-linux): the simulator and
 * the load generator share core 0, the proxy under test (gateway or bare proxy) has core 1.
 */
import type { Subprocess } from "bun";
import { dirname, join } from "node:path";

export const CORE = { upstream: 0, loadgen: 0, proxy: 1 } as const;

/**
 * The runtime's settings every measured process starts with, as Turnpike's start command and
 * image start it: the allocator keeps freed pages a second before it gives them back to the
 * system (decisions/0022-allocator-purge-delay.md). The references (bare proxy, floors, peer)
 * get the same, so that the runtime is the same on both sides of a ratio.
 * `BENCH_ALLOCATOR=default` leaves the allocator's own default (100 ms), to read what it changes.
 */
export const RUNTIME_ENV: Record<string, string> =
  process.env.BENCH_ALLOCATOR === "default" ? {} : { MIMALLOC_PURGE_DELAY: "1000" };

export interface Service {
  name: string;
  url: string;
  pid: number;
  proc: Subprocess;
  stop(): Promise<void>;
}

/** Directory of the simulator package (resolved through the workspace dependency). */
export function simulatorDir(): string {
  // The package's entry is src/index.ts; its CLI sits beside it.
  return dirname(dirname(Bun.resolveSync("@turnpike/simulator", import.meta.dir)));
}

/** The gateway app of this repository (bench is a sibling workspace; the gateway exports no package entry). */
export const GATEWAY_DIR = join(import.meta.dir, "..", "..", "apps", "gateway");

/** A free TCP port on loopback (the OS picks one; it is released at once for the child to bind). */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

let priority: string[] | undefined;

/**
 * `nice -n -10` in front of every benchmark process when allowed (root): on a shared machine,
 * other work then takes much less of the pinned cores from the processes being measured.
 * Empty when not allowed; the run still works, only noisier.
 */
export function priorityPrefix(): string[] {
  if (priority === undefined) {
    const probe = Bun.spawnSync(["nice", "-n", "-10", "nice"], { stdout: "pipe", stderr: "pipe" });
    priority = probe.exitCode === 0 && probe.stdout.toString().trim() === "-10" ? ["nice", "-n", "-10"] : [];
  }
  return priority;
}

/** Pins every thread of a running process to one core. */
export function pin(pid: number, core: number): void {
  const r = Bun.spawnSync(["taskset", "-a", "-p", "-c", String(core), String(pid)], {
    stdout: "ignore",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`taskset -a -p -c ${core} ${pid} failed: ${r.stderr.toString().trim()}`);
}

/** Collects a child's output so a failure can show it. */
function collect(stream: ReadableStream<Uint8Array> | undefined, sink: string[]): void {
  if (!stream) return;
  void (async () => {
    const dec = new TextDecoder();
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      sink.push(dec.decode(value, { stream: true }));
      if (sink.length > 400) sink.splice(0, sink.length - 400);
    }
  })();
}

/** Polls `url` until it answers (any HTTP status), or fails with the child's output. */
async function waitUntilUp(
  name: string,
  url: string,
  proc: Subprocess,
  output: string[],
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(
        `${name} exited (${proc.exitCode ?? proc.signalCode}) before it was up:\n${output.join("").trim()}`,
      );
    }
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      if (Date.now() > deadline)
        throw new Error(`${name} did not answer at ${url} within ${timeoutMs / 1000} s:\n${output.join("").trim()}`);
      await Bun.sleep(50);
    }
  }
}

export async function startService(opts: {
  name: string;
  core: number;
  cmd: string[];
  cwd: string;
  env?: Record<string, string>;
  port: number;
  /** Path polled until the service answers. */
  probe?: string;
  /** A file that takes the child's stderr whole (e.g. the runtime's GC log); default: kept in memory. */
  stderrFile?: string;
}): Promise<Service> {
  const output: string[] = [];
  const proc = Bun.spawn([...priorityPrefix(), "taskset", "-c", String(opts.core), ...opts.cmd], {
    cwd: opts.cwd,
    env: { ...process.env, ...RUNTIME_ENV, ...opts.env },
    stdout: "pipe",
    stderr: opts.stderrFile ? Bun.file(opts.stderrFile) : "pipe",
  });
  collect(proc.stdout, output);
  if (!opts.stderrFile) collect(proc.stderr as ReadableStream<Uint8Array>, output);
  const url = `http://127.0.0.1:${opts.port}`;
  try {
    await waitUntilUp(opts.name, url + (opts.probe ?? "/"), proc, output);
  } catch (e) {
    proc.kill();
    throw e;
  }
  // nice and taskset exec() the command, so the pid is the service's own; pin threads made since start.
  pin(proc.pid, opts.core);
  return {
    name: opts.name,
    url,
    pid: proc.pid,
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const killed = await Promise.race([proc.exited.then(() => true), Bun.sleep(3000).then(() => false)]);
      if (!killed) proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}
