import { describe, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { pinoLogger } from "./logger";

/** A stream that keeps what is written to it (pino-pretty pipes into a real stream). */
const capture = () => {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination };
};

describe("pinoLogger", () => {
  test("JSON lines: level by name, ISO time, msg, the fields; an error as its message and stack", () => {
    const { lines, destination } = capture();
    const log = pinoLogger({ level: "info", format: "json", secrets: [], destination });
    log.info("request", { request_id: "req_1", status: 200, skipped: undefined });
    log.error("failed", { request_id: "req_2" }, new Error("disk full"));
    const [a, b] = lines.map((l) => JSON.parse(l));
    expect(a).toEqual({
      level: "info",
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      msg: "request",
      request_id: "req_1",
      status: 200,
    });
    expect(b).toMatchObject({ level: "error", msg: "failed", request_id: "req_2", err_message: "disk full" });
    expect(b.err_stack).toContain("disk full");
  });

  test("TURNPIKE_LOG_LEVEL: lines below it are not written", () => {
    const { lines, destination } = capture();
    const log = pinoLogger({ level: "warn", format: "json", secrets: [], destination });
    log.info("request", { request_id: "req_1" });
    log.warn("slow", {});
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["slow"]);
  });

  test("a secret handed to the logger is blanked in the written line", () => {
    const { lines, destination } = capture();
    pinoLogger({ level: "info", format: "json", secrets: ["vendor-secret-123456"], destination }).warn(
      "upstream said",
      { reason: "bad key vendor-secret-123456" },
    );
    expect(JSON.parse(lines[0]!).reason).toBe("bad key [redacted]");
  });

  test("TURNPIKE_LOG_FORMAT=pretty: one readable line per entry, not JSON, secrets still blanked", () => {
    const { lines, destination } = capture();
    pinoLogger({ level: "info", format: "pretty", secrets: ["vendor-secret-123456"], destination }).info("request", {
      request_id: "req_9",
      status: 200,
      reason: "vendor-secret-123456",
    });
    const text = lines.join("");
    expect(() => JSON.parse(text)).toThrow();
    expect(text).toContain("INFO");
    expect(text).toContain("request");
    expect(text).toContain('request_id":"req_9"');
    expect(text).not.toContain("vendor-secret-123456");
    expect(text.trim().split("\n").length).toBe(1);
  });
});

describe("the request line", () => {
  test("pino's own shape (level, time, the fields, msg), undefined fields left out", () => {
    const { lines, destination } = capture();
    const log = pinoLogger({ level: "info", format: "json", secrets: ["vendor-secret-123456"], destination });
    log.request({
      request_id: "req_7",
      status: 200,
      cost_usd: 0.000123,
      aborted: false,
      ttft_ms: undefined,
      model: "alpha-haiku-4-5",
    });
    log.info("request", {
      request_id: "req_7",
      status: 200,
      cost_usd: 0.000123,
      aborted: false,
      model: "alpha-haiku-4-5",
    });
    expect(lines).toHaveLength(2);
    const [fast, viaPino] = lines.map((l) => JSON.parse(l));
    expect(fast).toEqual({
      level: "info",
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
      request_id: "req_7",
      status: 200,
      cost_usd: 0.000123,
      aborted: false,
      model: "alpha-haiku-4-5",
      msg: "request",
    });
    expect(Math.abs(Date.parse(fast.time) - Date.now())).toBeLessThan(60_000);
    expect(Object.keys(fast)).toEqual(Object.keys(viaPino));
    expect(lines[0]!.endsWith("}\n")).toBe(true);
  });

  test("off below info, and through pino-pretty in the pretty format", () => {
    const quiet = capture();
    pinoLogger({ level: "warn", format: "json", secrets: [], destination: quiet.destination }).request({
      request_id: "req_8",
    });
    expect(quiet.lines).toEqual([]);
    const pretty = capture();
    pinoLogger({ level: "info", format: "pretty", secrets: [], destination: pretty.destination }).request({
      request_id: "req_8",
    });
    expect(pretty.lines.join("")).toContain('request_id":"req_8"');
  });
});
