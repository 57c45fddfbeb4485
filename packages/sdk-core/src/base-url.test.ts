import { afterEach, describe, expect, test } from "bun:test";
import { DEFAULT_BASE_URL, gatewayOrigin, resolveCredentials } from "./base-url.js";
import { readEnv } from "./env.js";

const saved = { key: process.env.TURNPIKE_API_KEY, base: process.env.TURNPIKE_BASE_URL };
afterEach(() => {
  for (const [name, value] of [
    ["TURNPIKE_API_KEY", saved.key],
    ["TURNPIKE_BASE_URL", saved.base],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("gatewayOrigin", () => {
  test("accepts the origin or a base that ends in /v1, with or without a slash", () => {
    for (const base of ["http://gw:8080", "http://gw:8080/", "http://gw:8080/v1", "http://gw:8080/v1/"]) {
      expect(gatewayOrigin(base)).toBe("http://gw:8080");
    }
    expect(gatewayOrigin("https://example.com/turnpike/v1")).toBe("https://example.com/turnpike");
  });

  test("a relative or malformed base is a clear error", () => {
    for (const base of ["localhost:8080", "/v1", "gw"]) {
      expect(() => gatewayOrigin(base)).toThrow(
        `baseURL must be an absolute http(s) URL such as http://localhost:8080, got "${base}"`,
      );
    }
  });
});

describe("resolveCredentials", () => {
  test("options win over the environment", () => {
    process.env.TURNPIKE_API_KEY = "sk-env";
    process.env.TURNPIKE_BASE_URL = "http://env:1";
    expect(resolveCredentials({ apiKey: "sk-opt", baseURL: "http://opt:2/v1" }, "X")).toEqual({
      apiKey: "sk-opt",
      origin: "http://opt:2",
    });
    expect(resolveCredentials({}, "X")).toEqual({ apiKey: "sk-env", origin: "http://env:1" });
  });

  test("without a base the gateway default is used", () => {
    delete process.env.TURNPIKE_BASE_URL;
    expect(resolveCredentials({ apiKey: "k" }, "X").origin).toBe(DEFAULT_BASE_URL);
  });

  test("a missing key names the option, the client and the variable", () => {
    delete process.env.TURNPIKE_API_KEY;
    expect(() => resolveCredentials({}, "ChatClient")).toThrow(
      "Missing API key: pass it as new ChatClient({ apiKey }) or set the TURNPIKE_API_KEY environment variable.",
    );
  });

  test("blank variables count as unset", () => {
    process.env.TURNPIKE_API_KEY = "  ";
    expect(readEnv("TURNPIKE_API_KEY")).toBeUndefined();
  });
});
