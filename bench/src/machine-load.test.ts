import { expect, test } from "bun:test";
import { busyCores, parseProcStat } from "./machine-load";

test("busy share of the cpu line: idle and iowait are not busy", () => {
  const a = parseProcStat("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8\n");
  expect(a).toEqual({ busy: 150, total: 1000 });
  const b = parseProcStat("cpu  200 0 100 1550 150 0 0 0 0 0\n");
  // 150 busy jiffies of 1000 on 2 cores: 0.3 of a core.
  expect(busyCores(a, b, 2)).toBeCloseTo(0.3, 5);
});
