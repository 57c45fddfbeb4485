/**
 * Guardrails on MCP tool calls (docs/guardrails.md): a policy covering `mcp` reads a call's
 * arguments before the server gets them and restores its result; a blocking one refuses the call
 * before any server is asked. Upstream and client are the official SDK; the upstream records the
 * bodies it received.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { waitFor } from "../scaleout/cluster";
import { adminKey, errorCode, firstText, mcpClient, mcpConfigFile } from "./mcp-helpers";
import { startFiles, type Upstream } from "./upstream-servers";

const EMAIL = "dana.smith@example.com";

describe("guardrails on MCP tool calls", () => {
  let h: Harness;
  let files: Upstream;

  beforeAll(async () => {
    files = await startFiles();
    const config = mcpConfigFile({
      mcp_servers: [{ name: "files", url: files.url, timeout_ms: 5000 }],
      guardrails: {
        policies: {
          pii: { detect: ["email"], action: "redact", apply_to: ["mcp"] },
          "no-secrets": { detect: ["secret"], action: "block", apply_to: ["mcp"] },
          "prompts-only": { detect: ["card"], action: "mask", apply_to: ["prompt"] },
        },
      },
    });
    h = await startHarness({ TURNPIKE_CONFIG: config });
  });
  afterAll(async () => {
    await h.close();
    await files.stop();
  }, 30_000);

  const usage = async (keyId: string) =>
    (
      (await (
        await fetch(`${h.url}/admin/usage?key_id=${keyId}&limit=100`, {
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        })
      ).json()) as { data: Record<string, unknown>[] }
    ).data;

  test("the server gets a placeholder, the client its own value back, the record the category", async () => {
    const { key, id } = await adminKey(h.url, { tools: ["*"], guardrails: ["pii", "no-secrets"] });
    const { client } = await mcpClient(h.url, key);
    const before = files.bodies.length;
    const result = await client.callTool({ name: "files__read_file", arguments: { path: `/home/${EMAIL}/notes` } });
    expect(firstText(result)).toBe(`contents of /home/${EMAIL}/notes`);
    const sent = files.bodies.slice(before).join("\n");
    expect(sent).toContain("/home/[EMAIL_1]/notes");
    expect(sent).not.toContain(EMAIL);
    const rows = await waitFor("the call's row", async () => {
      const r = (await usage(id)).filter((x) => x.model === "files__read_file");
      return r.length ? r : undefined;
    });
    expect(rows[0]!.guardrail).toMatchObject({ policies: ["pii"], categories: ["email"], action: "redact" });
    await client.close();
  });

  test("a blocking policy refuses the call before the server is asked; a policy not covering mcp reads nothing", async () => {
    const { key, id } = await adminKey(h.url, { tools: ["*"], guardrails: ["no-secrets", "prompts-only"] });
    const { client } = await mcpClient(h.url, key);
    const before = files.calls.length;
    const refused = client.callTool({
      name: "files__read_file",
      arguments: { path: "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345" },
    });
    expect(await errorCode(refused)).toBe(-32043);
    expect(files.calls.length).toBe(before);
    // A card number passes: the policy that masks cards reads prompts only.
    const card = await client.callTool({ name: "files__read_file", arguments: { path: "4111 1111 1111 1111" } });
    expect(firstText(card)).toBe("contents of 4111 1111 1111 1111");
    const rows = await waitFor("two rows", async () => {
      const r = (await usage(id)).filter((x) => x.model === "files__read_file");
      return r.length === 2 ? r : undefined;
    });
    expect(rows.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(rows.find((r) => r.status === 400)!.guardrail).toMatchObject({
      policies: ["no-secrets"],
      categories: ["secret"],
      action: "block",
    });
    expect(JSON.stringify(rows)).not.toContain("sk-ant-api03");
    await client.close();
  });
});
