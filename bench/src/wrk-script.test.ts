import { describe, expect, test } from "bun:test";
import { luaLongString, wrkScript } from "./wrk-script";

describe("wrkScript", () => {
  test("sets method, body and every header, each as a Lua long string", () => {
    const lua = wrkScript({ method: "POST", headers: { "x-api-key": "sk-tp-abc" }, body: '{"a":"b"}' });
    expect(lua).toContain("wrk.method = [[POST]]");
    expect(lua).toContain('wrk.body = [[{"a":"b"}]]');
    // A space after the index bracket: `[[[` would open a long string in Lua.
    expect(lua).toContain("wrk.headers[ [[x-api-key]] ] = [[sk-tp-abc]]");
    expect(lua).toContain("done = function(summary, latency, requests)");
    expect(lua).toContain("latency:percentile(99)");
  });

  test("a body holding ]] gets a long bracket of a higher level", () => {
    expect(luaLongString('{"a":[[1]]}')).toBe('[=[{"a":[[1]]}]=]');
    expect(luaLongString("]]]=]")).toBe("[==[]]]=]]==]");
  });

  test("a leading newline survives (Lua drops the first one after the bracket)", () => {
    expect(luaLongString("\nx")).toBe("[[\n\nx]]");
  });
});
