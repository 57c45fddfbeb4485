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
    expect(a).toEqual({ level: "info", time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), msg: "request", request_id: "req_1", status: 200 });
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
    pinoLogger({ level: "info", format: "json", secrets: ["vendor-secret-123456"], destination }).warn("upstream said", { reason: "bad key vendor-secret-123456" });
    expect(JSON.parse(lines[0]!).reason).toBe("bad key [redacted]");
  });

  test("TURNPIKE_LOG_FORMAT=pretty: one readable line per entry, not JSON, secrets still blanked", () => {
    const { lines, destination } = capture();
    pinoLogger({ level: "info", format: "pretty", secrets: ["vendor-secret-123456"], destination }).info("request", { request_id: "req_9", status: 200, reason: "vendor-secret-123456" });
    const text = lines.join("");
    expect(() => JSON.parse(text)).toThrow();
    expect(text).toContain("INFO");
    expect(text).toContain("request");
    expect(text).toContain('request_id":"req_9"');
    expect(text).not.toContain("vendor-secret-123456");
    expect(text.trim().split("\n").length).toBe(1);
  });
});
