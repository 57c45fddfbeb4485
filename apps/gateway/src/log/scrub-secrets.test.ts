import { describe, expect, test } from "bun:test";
import { secretScrubber } from "./scrub-secrets";

describe("secretScrubber", () => {
  const scrub = secretScrubber(["sk-vendor-0123456789", "short", undefined, "admin-key-abcdefghijklmnop"]);

  test("blanks configured secrets wherever they stand, case and all", () => {
    expect(scrub('{"reason":"bad key sk-vendor-0123456789 given"}')).toBe('{"reason":"bad key [redacted] given"}');
    expect(scrub("ADMIN-KEY-ABCDEFGHIJKLMNOP")).toBe("[redacted]");
  });

  test("blanks any Turnpike key by its shape, and credentials after Bearer or an api-key header name", () => {
    expect(scrub("key sk-tp-AbCdEfGh123_-xyz refused")).toBe("key [redacted] refused");
    expect(scrub('"authorization":"Bearer anything.at-all"')).toBe('"authorization":"Bearer [redacted]"');
    expect(scrub('{\\"x-api-key\\":\\"some-value\\"}')).toBe('{\\"x-api-key\\":\\"[redacted]\\"}');
    expect(scrub("api_key=hunter22 next")).toBe("api_key=[redacted] next");
  });

  test("leaves ordinary lines alone, and does not hunt for secrets too short to be told from words", () => {
    const line = '{"msg":"request","request_id":"req_1","key_id":"key_abc","status":200,"note":"a short answer"}';
    expect(scrub(line)).toBe(line);
    expect(scrub("sk-tp-")).toBe("sk-tp-");
  });
});
