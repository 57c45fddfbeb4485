/**
 * Guardrails on MCP (docs/guardrails.md): a policy covering `mcp` reads a tool call's or a
 * prompt's arguments before the server gets them and restores its result; a blocking one refuses
 * the call before any server is asked. What a server sends back of a prompt or a resource is read
 * too: a value it holds is masked, a blocked one refused. Upstream and client are the official
 * SDK; the upstream records the bodies it received.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { waitFor } from "../scaleout/cluster";
import { adminKey, errorCode, firstText, mcpClient, mcpConfigFile } from "./mcp-helpers";
import { startFiles, startWeather, type Upstream } from "./upstream-servers";

const EMAIL = "dana.smith@example.com";
const SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345";

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

describe("guardrails on MCP prompts and resources", () => {
  let h: Harness;
  let weather: Upstream;

  beforeAll(async () => {
    weather = await startWeather();
    const config = mcpConfigFile({
      mcp_servers: [{ name: "weather", url: weather.url, timeout_ms: 5000 }],
      guardrails: {
        policies: {
          pii: { detect: ["email"], action: "redact", apply_to: ["mcp"] },
          "no-secrets": { detect: ["secret"], action: "block", apply_to: ["mcp"] },
        },
      },
    });
    h = await startHarness({ TURNPIKE_CONFIG: config });
  });
  afterAll(async () => {
    await h.close();
    await weather.stop();
  }, 30_000);

  const rows = (keyId: string, model: string, n: number) =>
    waitFor(`${n} rows of ${model}`, async () => {
      const res = await fetch(`${h.url}/admin/usage?key_id=${keyId}&limit=100`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      const r = ((await res.json()) as { data: Record<string, unknown>[] }).data.filter((x) => x.model === model);
      return r.length === n ? r : undefined;
    });
  const promptText = (p: { messages: { content: unknown }[] }) => (p.messages[0]!.content as { text: string }).text;

  test("a prompt's arguments: the server gets a placeholder, the client its own value back in the prompt", async () => {
    const { key, id } = await adminKey(h.url, { tools: ["*"], guardrails: ["pii", "no-secrets"] });
    const { client } = await mcpClient(h.url, key);
    const before = weather.bodies.length;
    const prompt = await client.getPrompt({ name: "weather__daily_brief", arguments: { city: `${EMAIL} town` } });
    expect(promptText(prompt)).toBe(`Brief me on the weather in ${EMAIL} town.`);
    const sent = weather.bodies.slice(before).join("\n");
    expect(sent).toContain("[EMAIL_1] town");
    expect(sent).not.toContain(EMAIL);
    // A secret in the arguments: refused before the server is asked.
    const asked = weather.bodies.length;
    expect(await errorCode(client.getPrompt({ name: "weather__daily_brief", arguments: { city: SECRET } }))).toBe(
      -32043,
    );
    expect(weather.bodies.slice(asked).join("\n")).not.toContain("daily_brief");
    const recorded = await rows(id, "weather__daily_brief", 2);
    expect(recorded.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(recorded.find((r) => r.status === 200)!.guardrail).toMatchObject({
      categories: ["email"],
      action: "redact",
    });
    expect(JSON.stringify(recorded)).not.toContain(SECRET);
    await client.close();
  });

  test("a resource's text: a value the server holds is masked; a blocked one refuses the read", async () => {
    const { key, id } = await adminKey(h.url, { tools: ["*"], guardrails: ["pii", "no-secrets"] });
    const { client } = await mcpClient(h.url, key);
    // The station template echoes its id into the text: the server holds the value, nothing restores it.
    const read = await client.readResource({ uri: `turnpike-mcp://weather/weather://stations/${EMAIL}` });
    expect(read.contents[0]).toMatchObject({ text: "Station [EMAIL]" });
    expect(JSON.stringify(read.contents.map((c) => (c as { text?: string }).text))).not.toContain(EMAIL);
    // Nothing found: as the server wrote it.
    const plain = await client.readResource({ uri: "turnpike-mcp://weather/weather://stations" });
    expect(plain.contents[0]).toMatchObject({ text: "Oslo, Lima, Perth" });
    expect(await errorCode(client.readResource({ uri: `turnpike-mcp://weather/weather://stations/${SECRET}` }))).toBe(
      -32043,
    );
    const recorded = await rows(id, "resources/read", 3);
    expect(recorded.map((r) => r.status).sort()).toEqual([200, 200, 400]);
    expect(
      recorded
        .filter((r) => r.guardrail)
        .map((r) => (r.guardrail as { action: string }).action)
        .sort(),
    ).toEqual(["block", "redact"]);
    await client.close();
  });

  test("a key none of whose policies covers mcp: prompts and resources pass as they are", async () => {
    const { key } = await adminKey(h.url, { tools: ["*"], guardrails: [] });
    const { client } = await mcpClient(h.url, key);
    const prompt = await client.getPrompt({ name: "weather__daily_brief", arguments: { city: EMAIL } });
    expect(promptText(prompt)).toBe(`Brief me on the weather in ${EMAIL}.`);
    const read = await client.readResource({ uri: `turnpike-mcp://weather/weather://stations/${EMAIL}` });
    expect(read.contents[0]).toMatchObject({ text: `Station ${EMAIL}` });
    await client.close();
  });
});
