/**
 * Preloaded into a gateway by `heap.ts` (`bun --preload`), never part of the gateway itself: on
 * SIGUSR2 it writes the process's heap figures to `$HEAP_PROBE_OUT.<n>.json` — `bun:jsc`
 * `heapStats()` with or without a full collection first, and with `HEAP_PROBE_SNAPSHOT=1` a heap
 * snapshot beside it. What to take is read from `$HEAP_PROBE_OUT.cmd` (`gc`, `nogc`, `snapshot`).
 */
import { heapStats } from "bun:jsc";
import { readFileSync, writeFileSync } from "node:fs";

const out = process.env.HEAP_PROBE_OUT;
let n = 0;
if (out) {
  process.on("SIGUSR2", () => {
    const cmd = (() => {
      try {
        return readFileSync(`${out}.cmd`, "utf8").trim();
      } catch {
        return "gc";
      }
    })();
    if (cmd !== "nogc") Bun.gc(true);
    const stats = heapStats();
    const mem = process.memoryUsage();
    writeFileSync(`${out}.${n}.json`, JSON.stringify({ cmd, stats, mem }));
    if (cmd === "snapshot") writeFileSync(`${out}.${n}.heapsnapshot`, JSON.stringify(Bun.generateHeapSnapshot()));
    n++;
  });
}
