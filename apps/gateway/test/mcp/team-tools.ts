import { expect } from "bun:test";
import { adminKey, errorCode, firstText, mcpClient } from "./mcp-helpers";

/**
 * A team's MCP allow-list, through the admin API and the official SDK client, on the gateway at
 * `url` (whatever its store): the team's list narrows its keys' own lists (both must pass), for
 * tools, prompts and resources; a PATCH to the team applies to an open session; a team list
 * naming a server not in the config is refused. The gateway serves the test upstreams `weather`
 * and `files` (upstream-servers.ts).
 */
export async function teamToolsFollowed(url: string, adminSecret: string): Promise<void> {
  const asAdmin = async (path: string, method: string, body: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${adminSecret}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const made = await asAdmin("/admin/teams", "POST", {
    name: `mcp team ${crypto.randomUUID().slice(0, 8)}`,
    tools: ["weather__*", "files__read_file"],
  });
  expect(made.status).toBe(201);
  expect(made.json.tools).toEqual(["weather__*", "files__read_file"]);
  const team = made.json.id as string;

  // A key that may use everything, in the team: what the team allows.
  const wide = (await adminKey(url, { tools: ["*"], team_id: team }, adminSecret)).key;
  const { client } = await mcpClient(url, wide);
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  expect(names).toContain("files__read_file");
  expect(names).toContain("weather__get_forecast");
  expect(names.filter((n) => n.startsWith("files__"))).toEqual(["files__read_file"]);
  expect(await errorCode(client.callTool({ name: "files__delete_file", arguments: { path: "/" } }))).toBe(-32602);
  expect(firstText(await client.callTool({ name: "weather__get_forecast", arguments: { city: "Oslo" } }))).toContain(
    "Oslo",
  );
  // Resources need the whole server in both lists: weather's are open, files' are not.
  const uris = (await client.listResources()).resources.map((r) => r.uri);
  expect(uris.some((u) => u.startsWith("turnpike-mcp://weather/"))).toBe(true);
  expect(uris.some((u) => u.startsWith("turnpike-mcp://files/"))).toBe(false);
  expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["weather__daily_brief"]);

  // A key whose own list is files only: the intersection is the one file tool.
  const narrow = (await adminKey(url, { tools: ["files__*"], team_id: team }, adminSecret)).key;
  const n = await mcpClient(url, narrow);
  expect((await n.client.listTools()).tools.map((t) => t.name)).toEqual(["files__read_file"]);
  expect(await errorCode(n.client.callTool({ name: "weather__get_forecast", arguments: { city: "Oslo" } }))).toBe(
    -32602,
  );

  // The team lifts its list: each key's own applies, at once in an open session.
  expect((await asAdmin(`/admin/teams/${team}`, "PATCH", { tools: null })).status).toBe(200);
  const files = (await n.client.listTools()).tools.map((t) => t.name);
  expect(files.length).toBeGreaterThan(1);
  expect(files.every((t) => t.startsWith("files__"))).toBe(true);
  expect(
    (await client.listTools()).tools.map((t) => t.name).filter((t) => t.startsWith("files__")).length,
  ).toBeGreaterThan(1);
  await client.close();
  await n.client.close();

  // Checked like a key's list.
  const bad = await asAdmin("/admin/teams", "POST", { name: "bad tools", tools: ["github__*"] });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.json)).toContain('no MCP server is named \\"github\\" in the config');
}
