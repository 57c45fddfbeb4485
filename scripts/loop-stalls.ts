/**
 * Preloaded into the gateway by `HOLD_PRELOAD=scripts/loop-stalls.ts bun scripts/event-loop-hold.ts …`
 * (Linux): prints to stderr each stall of its event loop over 40 ms (a timer due every 5 ms ran
 * late), when it ended (seconds since start), and how much of it the server's thread spent on a
 * CPU (`cpu`, work: this process's code, its collector's pauses) and waiting for one (`wait`: the
 * machine's other load), from the thread's `schedstat`. A SIGUSR2 (sent by event-loop-hold.ts as
 * it starts and stops measuring) prints a `MARK` line, so the stalls of the measured span can be
 * told from those of start-up and of the work before it.
 */
import { readFileSync } from "node:fs";
const path = `/proc/self/task/${process.pid}/schedstat`;
const sched = () => {
  const [run, wait] = readFileSync(path, "utf8").split(" ").map(Number);
  return [run! / 1e6, wait! / 1e6];
};
let last = performance.now();
let [lr, lw] = sched();
const t0 = performance.now();
setInterval(() => {
  const now = performance.now();
  const [r, w] = sched();
  const d = now - last - 5;
  if (d > 40)
    process.stderr.write(
      `STALL ${d.toFixed(0)} ms at +${((now - t0) / 1000).toFixed(2)} s cpu ${(r! - lr!).toFixed(0)} wait ${(w! - lw!).toFixed(0)}\n`,
    );
  last = now;
  lr = r!;
  lw = w!;
}, 5).unref();
process.on("SIGUSR2", () => process.stderr.write(`MARK at +${((performance.now() - t0) / 1000).toFixed(2)} s\n`));
