import { describe, expect, test } from "bun:test";
import { parseMcpConfig } from "./mcp-config";

describe("mcp_servers in the config file", () => {
  test("headers take environment values; defaults for timeout and limits", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own ${ENV} reference
    const c = parseMcpConfig({ mcp_servers: [{ name: "gh", url: "https://mcp.example.com/mcp", headers: { authorization: "Bearer ${GH_TOKEN}" } }] }, { GH_TOKEN: "t0k" }, "f.json");
    expect(c).toEqual({
      servers: [{ kind: "http", name: "gh", url: "https://mcp.example.com/mcp", headers: { authorization: "Bearer t0k" }, timeoutMs: 30_000 }],
      maxArgumentBytes: 1 << 20,
      maxResultBytes: 4 << 20,
    });
  });

  test("clear errors: unset variable, bad name, bad URL, duplicate, stdio without TURNPIKE_MCP_STDIO", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own ${ENV} reference
    expect(() => parseMcpConfig({ mcp_servers: [{ name: "gh", url: "https://x/mcp", headers: { a: "${NOPE}" } }] }, {}, "f")).toThrow("f: mcp_servers[0].headers.a: refers to ${NOPE}, which is not set in the environment");
    expect(() => parseMcpConfig({ mcp_servers: [{ name: "a__b", url: "https://x/mcp" }] }, {}, "f")).toThrow('single "_"');
    expect(() => parseMcpConfig({ mcp_servers: [{ name: "a", url: "file:///etc/passwd" }] }, {}, "f")).toThrow("mcp_servers[0].url: must be an http:// or https:// URL");
    expect(() => parseMcpConfig({ mcp_servers: [{ name: "a", url: "http://x/" }, { name: "a", url: "http://y/" }] }, {}, "f")).toThrow('"a" is named twice');
    expect(() => parseMcpConfig({ mcp_servers: [{ name: "local", command: "mcp-server-git" }] }, {}, "f")).toThrow("set TURNPIKE_MCP_STDIO=on to allow it");
    expect(parseMcpConfig({ mcp_servers: [{ name: "local", command: "mcp-server-git", args: ["--repo", "."] }] }, { TURNPIKE_MCP_STDIO: "on" }, "f").servers[0]).toMatchObject({ kind: "stdio", command: "mcp-server-git", args: ["--repo", "."] });
  });

  test("no mcp_servers: none", () => {
    expect(parseMcpConfig({}, {}, "config").servers).toEqual([]);
  });
});
