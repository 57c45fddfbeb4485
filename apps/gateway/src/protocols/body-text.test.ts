import { describe, expect, test } from "bun:test";
import { bodyText, derivedFrom, keepText } from "./body-text";

/** A body as read from `text`, and a copy changed by `change`, as passthrough derives one. */
function derive(text: string, change: (b: Record<string, unknown>) => void): Record<string, unknown> {
  const parsed = JSON.parse(text) as Record<string, unknown>; // the test's own JSON object
  keepText(parsed, text);
  const out = { ...parsed };
  change(out);
  derivedFrom(out, parsed);
  return out;
}

describe("bodyText", () => {
  test("an unchanged body is the client's text, byte for byte", () => {
    const text = '{ "model":"m" ,\n "n": 1.0, "s": "caf\\u00e9 \\"quoted\\" \\\\", "deep": {"a": [1, {"b": "}"}]} }\n';
    expect(bodyText(derive(text, () => {}))).toBe(text);
  });

  test("a replaced value is written anew; its key, the spacing around it and every other member keep their text", () => {
    const text = '{"model" : "client-name", "x": 1e3}';
    expect(bodyText(derive(text, (b) => (b.model = "vendor-name")))).toBe('{"model" : "vendor-name", "x": 1e3}');
  });

  test("a removed member goes with its comma, first, middle or last", () => {
    const text = '{"turnpike": {"a": 1}, "model": "m", "mid": [1], "last": true}';
    expect(bodyText(derive(text, (b) => delete b.turnpike))).toBe('{"model": "m", "mid": [1], "last": true}');
    expect(bodyText(derive(text, (b) => delete b.mid))).toBe('{"turnpike": {"a": 1}, "model": "m", "last": true}');
    expect(bodyText(derive(text, (b) => delete b.last))).toBe('{"turnpike": {"a": 1}, "model": "m", "mid": [1]}');
  });

  test("an added member is appended", () => {
    const text = '{"model": "m", "stream": true}';
    const out = bodyText(derive(text, (b) => (b.stream_options = { include_usage: true })));
    expect(out).toBe('{"model": "m", "stream": true,"stream_options":{"include_usage":true}}');
    expect(JSON.parse(out)).toEqual({ model: "m", stream: true, stream_options: { include_usage: true } });
  });

  test("a key that repeats, or a body with no remembered text, is written by JSON.stringify", () => {
    const twice = '{"model": "a", "model": "b"}';
    expect(bodyText(derive(twice, () => {}))).toBe('{"model":"b"}');
    expect(bodyText({ model: "m", n: 1.5 })).toBe('{"model":"m","n":1.5}');
  });

  test("strings with escaped quotes and backslashes before a quote do not end early", () => {
    const text = '{"a": "x\\\\", "b": "\\\\\\"}", "c": 2}';
    expect(bodyText(derive(text, (b) => (b.c = 3)))).toBe('{"a": "x\\\\", "b": "\\\\\\"}", "c": 3}');
  });
});
