import { describe, expect, test } from "bun:test";
import type { KeyRecord } from "../storage/store";
import { SERVER_NAME } from "../config/mcp-config";
import { namespaced, splitName, unwrapUri, wrapUri } from "./namespacing";
import { ToolAllowList, toolPatternProblem } from "./tool-allow-list";

const key = (tools: string[] | null | undefined): KeyRecord => ({
  id: "key_1",
  name: "k",
  hash: "h",
  prefix: "sk-tp-x",
  models: null,
  rpm: null,
  tpm: null,
  model_limits: null,
  budget_usd: null,
  expires_at: null,
  prev_hash: null,
  prev_valid_until: null,
  created_at: "",
  updated_at: "",
  revoked_at: null,
  ...(tools === undefined ? {} : { tools }),
});

describe("a key's MCP allow-list", () => {
  const allow = new ToolAllowList();

  test("with the server names the config accepts, a namespaced name splits back to its own server and a grant reaches no other server's tools", () => {
    const servers = ["docs", "docs-", "docs-a", "docs_a", "d", "a1"];
    for (const s of servers) expect(SERVER_NAME.test(s)).toBe(true);
    for (const refused of ["docs_", "_docs", "do__cs"]) expect(SERVER_NAME.test(refused)).toBe(false);
    const tools = ["x", "_x", "__x", "a__x", "x_", "-x"];
    for (const owner of servers)
      for (const tool of tools) {
        const name = namespaced(owner, tool);
        expect(splitName(name)).toEqual({ server: owner, name: tool });
        for (const granted of servers) {
          const k = key([`${granted}__*`]);
          expect(allow.allows(k, name)).toBe(granted === owner);
          expect(allow.allowsServer(k, owner)).toBe(granted === owner);
        }
      }
  });

  test("globs over namespaced names; none or empty: nothing", () => {
    const k = key(["github__get_*", "docs__search"]);
    expect(
      [
        "github__get_issue",
        "github__get_",
        "github__create_issue",
        "docs__search",
        "docs__search2",
        "gitlab__get_x",
      ].map((n) => allow.allows(k, n)),
    ).toEqual([true, true, false, true, false, false]);
    expect(allow.allows(key(["*"]), "any__thing")).toBe(true);
    expect(allow.allows(key(undefined), "github__get_issue")).toBe(false);
    expect(allow.allows(key([]), "github__get_issue")).toBe(false);
    // Regular-expression characters in a pattern are literal.
    expect(allow.allows(key(["a__b.c"]), "a__bxc")).toBe(false);
  });

  test("a server's resources need the whole server; its lists are asked for when any name of it may be used", () => {
    expect(allow.allowsServer(key(["docs__*"]), "docs")).toBe(true);
    expect(allow.allowsServer(key(["docs__search"]), "docs")).toBe(false);
    expect(allow.allowsSomethingOf(key(["docs__search"]), "docs")).toBe(true);
    expect(allow.allowsSomethingOf(key(["docs__search"]), "doc")).toBe(false);
  });

  test("patterns on POST /admin/keys: a configured server, a tool part, no server glob", () => {
    const servers = ["github", "docs"];
    expect(toolPatternProblem("*", servers)).toBeUndefined();
    expect(toolPatternProblem("github__*", servers)).toBeUndefined();
    expect(toolPatternProblem("jira__*", servers)).toBe('no MCP server is named "jira" in the config (github, docs)');
    expect(toolPatternProblem("git*__x", servers)).toBe("the server part names one server (no glob)");
    expect(toolPatternProblem("github", servers)).toContain('"<server>__<tool glob>"');
    expect(toolPatternProblem("github__", servers)).toContain('"<server>__<tool glob>"');
    expect(toolPatternProblem("github__a b", servers)).toBe("printable characters without spaces, at most 200");
  });
});

describe("namespaced names and resource URIs", () => {
  test("the first __ splits (a server's name holds none)", () => {
    expect(splitName("github__create__issue")).toEqual({ server: "github", name: "create__issue" });
    expect(splitName("nounderscores")).toBeUndefined();
    expect(splitName("__x")).toBeUndefined();
    expect(splitName("x__")).toBeUndefined();
  });

  test("a resource URI goes back to its server as it was", () => {
    const wrapped = wrapUri("docs", "file:///a/b.md?x=1");
    expect(wrapped).toBe("turnpike-mcp://docs/file:///a/b.md?x=1");
    expect(unwrapUri(wrapped)).toEqual({ server: "docs", uri: "file:///a/b.md?x=1" });
    expect(unwrapUri("file:///a")).toBeUndefined();
    expect(unwrapUri("turnpike-mcp://docs/")).toBeUndefined();
  });
});
