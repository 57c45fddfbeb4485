import { expect, test } from "bun:test";
import { busyCores, parseProcStat, stolenCores } from "./machine-load";

test("busy share of the cpu line: idle and iowait are not busy", () => {
  const a = parseProcStat("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8\n");
  expect(a).toEqual({ busy: 150, total: 1000, steal: 0 });
  const b = parseProcStat("cpu  200 0 100 1550 150 0 0 0 0 0\n");
  // 150 busy jiffies of 1000 on 2 cores: 0.3 of a core.
  expect(busyCores(a, b, 2)).toBeCloseTo(0.3, 5);
});

test("steal: what the host took, counted busy and told apart", () => {
  const a = parseProcStat("cpu  100 0 50 800 50 0 0 0 0 0\n");
  const b = parseProcStat("cpu  200 0 100 1450 150 0 0 100 0 0\n");
  expect(b.steal).toBe(100);
  // 250 busy jiffies (100 of them stolen) of 1000 on 2 cores.
  expect(busyCores(a, b, 2)).toBeCloseTo(0.5, 5);
  expect(stolenCores(a, b, 2)).toBeCloseTo(0.2, 5);
});
