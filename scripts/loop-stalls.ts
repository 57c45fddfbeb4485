/**
 * Preloaded into the gateway by `HOLD_PRELOAD=scripts/loop-stalls.ts bun scripts/event-loop-hold.ts …`
 * (Linux): prints to stderr each stall of its event loop over 40 ms (a timer due every 5 ms ran
 * late), when it ended (seconds since start), and how much of it the server's thread spent on a
 * CPU (`cpu`, work: this process's code, its collector's pauses) and waiting for one (`wait`: the
 * machine's other load), from the thread's `schedstat`.
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
