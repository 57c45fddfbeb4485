import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_KEY } from "../harness";

/** A config file holding `mcp_servers` (and anything else given). */
export function mcpConfigFile(file: Record<string, unknown>): string {
  const path = join(mkdtempSync(join(tmpdir(), "turnpike-mcp-")), "turnpike.json");
  writeFileSync(path, JSON.stringify(file));
  return path;
}

/** The official SDK client, connected to a gateway's `/mcp` with a Turnpike key (or resuming a session). */
export async function mcpClient(
  gatewayUrl: string,
  key: string,
  sessionId?: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    ...(sessionId ? { sessionId } : {}),
  });
  const client = new Client({ name: "turnpike-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** `POST /admin/keys` on a gateway; its secret and id. */
export async function adminKey(
  url: string,
  body: Record<string, unknown>,
  adminSecret = ADMIN_KEY,
): Promise<{ key: string; id: string }> {
  const res = await fetch(`${url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminSecret}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "mcp", ...body }),
  });
  if (res.status !== 201) throw new Error(`POST /admin/keys answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { key: string; id: string };
}

/** The text of a tool result's first content block. */
export function firstText(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content; // a CallToolResult
  return content?.[0]?.text ?? "";
}

/** The MCP error code a rejected SDK call carries. */
export async function errorCode(p: Promise<unknown>): Promise<number | string> {
  try {
    await p;
    return "no error";
  } catch (e) {
    return (e as { code?: number }).code ?? String(e); // an McpError carries its code
  }
}
