import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

/** An MCP server over stdio (the official SDK), run by the gateway as a child process in the tests. */
const server = new McpServer({ name: "stdio-upstream", version: "1.0.0" });
server.registerTool(
  "echo",
  { description: "Echoes its text and one variable of its environment.", inputSchema: { text: z.string() } },
  async ({ text }) => ({
    content: [
      {
        type: "text",
        text: `${text} (GREETING=${process.env.GREETING ?? "unset"}, TURNPIKE_MCP_TEST_SECRET=${process.env.TURNPIKE_MCP_TEST_SECRET ?? "unset"})`,
      },
    ],
  }),
);
await server.connect(new StdioServerTransport());
