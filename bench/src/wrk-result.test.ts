import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { errorCount, parseWrkOutput, rps } from "./wrk-result";

const fixture = (name: string) => Bun.file(join(import.meta.dir, "__fixtures__", name)).text();

describe("parseWrkOutput on real wrk 4.1 outputs", () => {
  test("a clean run at concurrency 32: counts, duration and latency percentiles in µs", async () => {
    const r = parseWrkOutput(await fixture("wrk-direct-c32.txt"));
    expect(r.requests).toBe(152459);
    expect(r.durationUs).toBe(3001816);
    expect(r.bytes).toBe(127233514);
    expect(r.latencyUs).toEqual({
      min: 83,
      mean: 656.2,
      stdev: 400.36,
      max: 8270,
      p50: 592,
      p90: 800,
      p99: 2504,
      p999: 5553,
    });
    expect(errorCount(r)).toBe(0);
    // wrk's own summary line says 50788.92
    expect(rps(r)).toBeCloseTo(50788.9, 0);
  });

  test("a run at concurrency 1 through the bare proxy", async () => {
    const r = parseWrkOutput(await fixture("wrk-bare-proxy-c1.txt"));
    expect(r.requests).toBe(12304);
    expect(r.latencyUs.p50).toBe(151);
    expect(r.latencyUs.p99).toBe(8250);
    expect(rps(r)).toBeCloseTo(4090.4, 0);
  });

  test("a gateway stream run (tens of ms: values above wrk's own unit switch stay in µs)", async () => {
    const r = parseWrkOutput(await fixture("wrk-gateway-stream-c32.txt"));
    expect(r.requests).toBe(2270);
    expect(r.latencyUs.p50).toBe(24489);
    expect(r.latencyUs.p99).toBe(111718);
    expect(r.latencyUs.max).toBe(136471);
    expect(errorCount(r)).toBe(0);
    expect(rps(r)).toBeCloseTo(1131.8, 0);
  });

  test("non-2xx replies are counted as errors, so a cell of fast 401s is not taken for a result", async () => {
    const r = parseWrkOutput(await fixture("wrk-status-errors.txt"));
    expect(r.errors.status).toBe(50089);
    expect(errorCount(r)).toBe(r.requests);
  });

  test("no result line (wrk could not connect) is an error that quotes wrk", async () => {
    expect(() => parseWrkOutput("")).toThrow("(nothing)");
    const refused = await fixture("wrk-connection-refused.txt");
    expect(() => parseWrkOutput(refused)).toThrow("unable to connect to 127.0.0.1:19990 Connection refused");
  });

  test("a malformed result line names the field", () => {
    expect(() => parseWrkOutput('WRK_RESULT {"requests":1}')).toThrow("errors must be an object");
    expect(() => parseWrkOutput("WRK_RESULT {oops")).toThrow("not JSON");
    const line =
      'WRK_RESULT {"requests":1,"duration_us":1,"bytes":1,"errors":{"connect":0,"read":0,"write":0,"status":0,"timeout":0},' +
      '"latency_us":{"min":1,"mean":1,"stdev":0,"max":1,"p50":"fast","p90":1,"p99":1,"p999":1}}';
    expect(() => parseWrkOutput(line)).toThrow('latency_us.p50 must be a non-negative number, got "fast"');
  });
});

test("a run that completed no request: no latency to read (wrk prints -2^63 as its minimum), and it counts as an error", () => {
  const line =
    'WRK_RESULT {"requests":0,"duration_us":2001234,"bytes":0,"errors":{"connect":0,"read":0,"write":0,"status":0,"timeout":0},' +
    '"latency_us":{"min":-9223372036854775808,"mean":0.00,"stdev":0.00,"max":0,"p50":0,"p90":0,"p99":0,"p999":0}}';
  const r = parseWrkOutput(`Running 2s test\n${line}\n`);
  expect(r.requests).toBe(0);
  expect(r.latencyUs.min).toBe(0);
  expect(errorCount(r)).toBe(1);
  expect(rps(r)).toBe(0);
});
