import { describe, expect, test } from "bun:test";
import { ConfigError } from "../vocabulary/config-error";
import { parseMcpConfig } from "./mcp-config";

describe("mcp_servers in the config file", () => {
  test("headers take environment values; defaults for timeout and limits", () => {
    const c = parseMcpConfig(
      {
        mcp_servers: [
          { name: "gh", url: "https://mcp.example.com/mcp", headers: { authorization: "Bearer ${GH_TOKEN}" } },
        ],
      },
      { GH_TOKEN: "t0k" },
      "f.json",
    );
    expect(c).toEqual({
      servers: [
        {
          kind: "http",
          name: "gh",
          url: "https://mcp.example.com/mcp",
          headers: { authorization: "Bearer t0k" },
          timeoutMs: 30_000,
        },
      ],
      maxArgumentBytes: 1 << 20,
      maxResultBytes: 4 << 20,
    });
  });

  test("clear errors: unset variable, bad name, bad URL, duplicate, stdio without TURNPIKE_MCP_STDIO", () => {
    expect(() =>
      parseMcpConfig({ mcp_servers: [{ name: "gh", url: "https://x/mcp", headers: { a: "${NOPE}" } }] }, {}, "f"),
    ).toThrow("f: mcp_servers[0].headers.a: refers to ${NOPE}, which is not set in the environment");
    expect(() => parseMcpConfig({ mcp_servers: [{ name: "a__b", url: "https://x/mcp" }] }, {}, "f")).toThrow(
      'single "_"',
    );
    expect(() => parseMcpConfig({ mcp_servers: [{ name: "a", url: "file:///etc/passwd" }] }, {}, "f")).toThrow(
      "mcp_servers[0].url: must be an http:// or https:// URL",
    );
    expect(() =>
      parseMcpConfig(
        {
          mcp_servers: [
            { name: "a", url: "http://x/" },
            { name: "a", url: "http://y/" },
          ],
        },
        {},
        "f",
      ),
    ).toThrow('"a" is named twice');
    expect(() => parseMcpConfig({ mcp_servers: [{ name: "local", command: "mcp-server-git" }] }, {}, "f")).toThrow(
      "set TURNPIKE_MCP_STDIO=on to allow it",
    );
    expect(
      parseMcpConfig(
        { mcp_servers: [{ name: "local", command: "mcp-server-git", args: ["--repo", "."] }] },
        { TURNPIKE_MCP_STDIO: "on" },
        "f",
      ).servers[0],
    ).toMatchObject({ kind: "stdio", command: "mcp-server-git", args: ["--repo", "."] });
  });

  test("every mistake at once, one `file: path: rule` line each", () => {
    const file = {
      mcp_servers: [
        { name: "Bad Name", url: "https://x/mcp", timout_ms: 5 },
        { name: "ok", url: "ftp://x/", headers: { a: 1 } },
        { name: "ok2", url: "https://x/mcp", timeout_ms: -1 },
      ],
      mcp_limits: { argument_bytes: "1MB" },
    };
    let problems: readonly string[] = [];
    try {
      parseMcpConfig(file, {}, "turnpike.yaml");
    } catch (e) {
      if (e instanceof ConfigError) problems = e.problems;
    }
    expect(problems).toEqual([
      'turnpike.yaml: mcp_servers[0].name: at most 64 lower-case letters, digits, "-" and single "_" (never first or last; it prefixes "<name>__<tool>"), got "Bad Name"',
      "turnpike.yaml: mcp_servers[0].timout_ms: unknown field `timout_ms` — did you mean `timeout_ms`?",
      'turnpike.yaml: mcp_servers[1].url: must be an http:// or https:// URL, got "ftp://x/"',
      "turnpike.yaml: mcp_servers[1].headers.a: must be a string, got 1",
      "turnpike.yaml: mcp_servers[2].timeout_ms: must be a positive whole number, got -1",
      'turnpike.yaml: mcp_limits.argument_bytes: must be a positive whole number, got "1MB"',
    ]);
  });

  test("the checks past the schema also report together: a duplicate, unset variables, a stdio server", () => {
    const file = {
      mcp_servers: [
        { name: "gh", url: "https://x/mcp", headers: { a: "${ONE}", b: "${TWO}" } },
        { name: "gh", command: "mcp-server-git" },
      ],
    };
    expect(() => parseMcpConfig(file, {}, "f")).toThrow(
      [
        "f: mcp_servers[0].headers.a: refers to ${ONE}, which is not set in the environment",
        "f: mcp_servers[0].headers.b: refers to ${TWO}, which is not set in the environment",
        'f: mcp_servers[1].name: "gh" is named twice',
        'f: mcp_servers[1]: a stdio server ("command") runs a program on this host; set TURNPIKE_MCP_STDIO=on to allow it',
      ].join("\n"),
    );
  });

  test("server names that could make a namespaced name ambiguous are refused: `docs_` beside `docs`, a leading `_`, 65 characters", () => {
    const two = (a: string, b: string) => () =>
      parseMcpConfig(
        {
          mcp_servers: [
            { name: a, url: "https://x/mcp" },
            { name: b, url: "https://y/mcp" },
          ],
        },
        {},
        "f",
      );
    // `docs___x` would be listed by both and always called on `docs`.
    expect(two("docs", "docs_")).toThrow(
      'f: mcp_servers[1].name: at most 64 lower-case letters, digits, "-" and single "_" (never first or last; it prefixes "<name>__<tool>"), got "docs_"',
    );
    expect(two("docs", "_docs")).toThrow("mcp_servers[1].name");
    expect(two("docs", "d".repeat(65))).toThrow("mcp_servers[1].name");
    expect(two("docs", "docs\u0000")).toThrow("mcp_servers[1].name");
    expect(
      parseMcpConfig(
        {
          mcp_servers: [
            { name: "docs", url: "https://x/mcp" },
            { name: "docs_v2", url: "https://y/mcp" },
          ],
        },
        {},
        "f",
      ).servers.map((s) => s.name),
    ).toEqual(["docs", "docs_v2"]);
    expect(
      parseMcpConfig({ mcp_servers: [{ name: "d".repeat(64), url: "https://x/mcp" }] }, {}, "f").servers,
    ).toHaveLength(1);
  });

  test("no mcp_servers: none", () => {
    expect(parseMcpConfig({}, {}, "config").servers).toEqual([]);
  });
});
