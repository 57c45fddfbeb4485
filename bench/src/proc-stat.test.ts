import { describe, expect, test } from "bun:test";
import { cpuMicros, parseStatTicks, parseStatusRssKib, rssKib } from "./proc-stat";

describe("procfs readers", () => {
  test("utime + stime from a real /proc/<pid>/stat line", () => {
    const line =
      "14042 (cat) R 14038 14038 11456 0 -1 4194304 102 0 0 0 7 3 0 0 20 0 1 0 80325 3133440 417 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";
    expect(parseStatTicks(line)).toBe(10);
  });

  test("a command name with spaces and parentheses does not shift the fields", () => {
    const line = "77 (bun (worker) x) S 1 77 77 0 -1 4194560 5 0 0 0 1234 56 0 0 20 0 9 0 100 0 0";
    expect(parseStatTicks(line)).toBe(1290);
  });

  test("VmRSS in KiB", () => {
    expect(parseStatusRssKib("Name:\tbun\nVmPeak:\t  99 kB\nVmRSS:\t  102844 kB\nRssAnon:\t 1 kB\n")).toBe(102844);
    expect(() => parseStatusRssKib("Name:\tzombie\n")).toThrow("no VmRSS");
  });

  test("this process: CPU time grows with work, RSS is plausible", () => {
    const before = cpuMicros(process.pid);
    let x = 0;
    const until = performance.now() + 60;
    while (performance.now() < until) x += Math.sqrt(x + 1);
    expect(cpuMicros(process.pid)).toBeGreaterThan(before);
    expect(rssKib(process.pid)).toBeGreaterThan(1024);
  });
});
