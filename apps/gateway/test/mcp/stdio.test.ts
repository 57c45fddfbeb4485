import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type Harness, startHarness } from "../harness";
import { adminKey, firstText, mcpClient, mcpConfigFile } from "./mcp-helpers";

/** A stdio MCP server, allowed with TURNPIKE_MCP_STDIO=on, run by the gateway as a child process. */
describe("MCP over stdio", () => {
  let h: Harness;

  beforeAll(async () => {
    // A secret in the gateway's own environment: the child must not inherit it.
    process.env.TURNPIKE_MCP_TEST_SECRET = "s3cret";
    const config = mcpConfigFile({
      mcp_servers: [
        {
          name: "local",
          command: process.execPath,
          args: [join(import.meta.dir, "stdio-upstream.ts")],
          env: { GREETING: "hej" },
        },
      ],
    });
    h = await startHarness({ TURNPIKE_CONFIG: config, TURNPIKE_MCP_STDIO: "on" });
  });
  afterAll(async () => {
    delete process.env.TURNPIKE_MCP_TEST_SECRET;
    await h.close();
  });

  test("its tools are listed and called; the child gets its configured env and none of the gateway's secrets", async () => {
    const { key } = await adminKey(h.url, { tools: ["local__*"] });
    const { client } = await mcpClient(h.url, key);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["local__echo"]);
    expect(firstText(await client.callTool({ name: "local__echo", arguments: { text: "hi" } }))).toBe(
      "hi (GREETING=hej, TURNPIKE_MCP_TEST_SECRET=unset)",
    );
    await client.close();
  });
});
