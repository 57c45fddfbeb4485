/**
 * Every kind of MCP request takes the request path's steps: a checked name, admission (the key's
 * and its team's budgets, the key's rpm) before any upstream is asked, one ledger row, one request
 * line, one span, and metric labels from bounded sets. Upstreams and clients are the official SDK.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { startOtlpReceiver } from "../ops/otlp-receiver";
import { waitFor } from "../scaleout/cluster";
import { adminKey, errorCode, firstText, mcpClient, mcpConfigFile } from "./mcp-helpers";
import { startFiles, startWeather, type Upstream } from "./upstream-servers";
import type { LogFields, Logger } from "../../src/log/logger";

const usage = async (url: string, keyId: string): Promise<Record<string, unknown>[]> => {
  const res = await fetch(`${url}/admin/usage?key_id=${keyId}&limit=1000`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  return ((await res.json()) as { data: Record<string, unknown>[] }).data;
};

/** A logger that keeps each request line (and drops the rest). */
function capturingLogger(): Logger & { lines: LogFields[] } {
  const lines: LogFields[] = [];
  const none = () => {};
  return { lines, error: none, warn: none, info: none, request: (f) => lines.push(f) };
}

describe("MCP requests on the request path", () => {
  let h: Harness;
  let weather: Upstream;
  let files: Upstream;
  const logger = capturingLogger();
  const receiver = startOtlpReceiver();

  beforeAll(async () => {
    [weather, files] = await Promise.all([startWeather(), startFiles()]);
    const config = mcpConfigFile({
      mcp_servers: [
        { name: "weather", url: weather.url, timeout_ms: 5000 },
        { name: "files", url: files.url, timeout_ms: 5000 },
      ],
    });
    h = await startHarness({ TURNPIKE_CONFIG: config, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, { logger });
  });
  afterAll(async () => {
    await h.close();
    receiver.stop();
    await Promise.all([weather.stop(), files.stop()]);
  }, 30_000);

  test("every kind of request is one ledger row and one request line, with its method, server and name", async () => {
    const { key, id } = await adminKey(h.url, { tools: ["*"] });
    const { client } = await mcpClient(h.url, key);
    await client.listTools();
    await client.callTool({ name: "files__read_file", arguments: { path: "a" } });
    await client.listPrompts();
    await client.getPrompt({ name: "weather__daily_brief", arguments: { city: "Oslo" } });
    await client.listResources();
    await client.listResourceTemplates();
    expect((await client.readResource({ uri: "turnpike-mcp://weather/weather://stations" })).contents[0]).toMatchObject(
      {
        text: "Oslo, Lima, Perth",
      },
    );
    const rows = await waitFor("seven ledger rows", async () => {
      const r = await usage(h.url, id);
      return r.length === 7 ? r : undefined;
    });
    const seen = rows.map((r) => [r.model, r.deployment ?? null, r.status, r.endpoint, r.cost_usd]).sort();
    expect(seen).toEqual(
      [
        ["tools/list", null, 200, "mcp", 0],
        ["files__read_file", "files", 200, "mcp", 0],
        ["prompts/list", null, 200, "mcp", 0],
        ["weather__daily_brief", "weather", 200, "mcp", 0],
        ["resources/list", null, 200, "mcp", 0],
        ["resources/templates/list", null, 200, "mcp", 0],
        ["resources/read", "weather", 200, "mcp", 0],
      ].sort(),
    );
    const mine = logger.lines.filter((l) => l.key_id === id);
    expect(mine.map((l) => l.method).sort()).toEqual(
      [
        "tools/list",
        "tools/call",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
      ].sort(),
    );
    // The request line and the ledger row name the same request.
    expect(new Set(mine.map((l) => String(l.request_id)))).toEqual(new Set(rows.map((r) => String(r.request_id))));
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toMatch(
      /turnpike_mcp_requests_total\{method="resources\/read",server="weather",status="200"\} [1-9]/,
    );
    expect(metrics).toMatch(/turnpike_mcp_requests_total\{method="tools\/list",server="",status="200"\} [1-9]/);
    await client.close();
  });

  test("a key with rpm 3 gets 3 requests of any kind, each with its ledger row; the 4th reaches no upstream", async () => {
    const { key, id } = await adminKey(h.url, { tools: ["*"], rpm: 3 });
    const { client } = await mcpClient(h.url, key);
    expect((await client.readResource({ uri: "turnpike-mcp://weather/weather://stations" })).contents).toHaveLength(1);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    expect(firstText(await client.callTool({ name: "files__read_file", arguments: { path: "x" } }))).toBe(
      "contents of x",
    );
    const asked = weather.authorizations.length + files.authorizations.length;
    for (const refused of [
      client.listTools(),
      client.listPrompts(),
      client.readResource({ uri: "turnpike-mcp://weather/weather://stations" }),
      client.getPrompt({ name: "weather__daily_brief", arguments: { city: "Oslo" } }),
      client.callTool({ name: "files__read_file", arguments: { path: "y" } }),
    ])
      expect(await errorCode(refused)).toBe(-32029);
    expect(weather.authorizations.length + files.authorizations.length).toBe(asked);
    const rows = await waitFor("three rows", async () => {
      const r = await usage(h.url, id);
      return r.length >= 3 ? r : undefined;
    });
    expect(rows.map((r) => r.model).sort()).toEqual(["files__read_file", "resources/read", "tools/list"]);
    await client.close();
  });

  test("a key with a spent budget is refused every kind of request before anything reaches an upstream", async () => {
    const { key, id } = await adminKey(h.url, { tools: ["*"], budget_usd: 1 });
    // One model call spends, then the budget is lowered below what it spent (a call is admitted
    // only when its worst case fits, so one call alone never spends a budget whole).
    const spend = await fetch(`${h.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "beta-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(spend.status).toBe(200);
    await spend.text();
    const lowered = await fetch(`${h.url}/admin/keys/${id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ budget_usd: 0.000001 }),
    });
    expect(lowered.status).toBe(200);
    const { client } = await mcpClient(h.url, key);
    const asked = weather.authorizations.length + files.authorizations.length;
    for (const refused of [
      client.listTools(),
      client.listResources(),
      client.readResource({ uri: "turnpike-mcp://weather/weather://stations" }),
      client.getPrompt({ name: "weather__daily_brief", arguments: { city: "Oslo" } }),
      client.callTool({ name: "files__read_file", arguments: { path: "y" } }),
    ]) {
      const code = await errorCode(refused);
      expect(code).toBe(-32042);
    }
    try {
      await client.listPrompts();
      throw new Error("listed");
    } catch (e) {
      expect((e as Error).message).toContain("monthly budget");
    }
    expect(weather.authorizations.length + files.authorizations.length).toBe(asked);
    // Only the model call is in the ledger.
    expect((await usage(h.url, id)).map((r) => r.endpoint)).toEqual(["chat"]);
    await client.close();
  });

  test("names with a NUL, control characters or 10,000 characters are refused with a JSON-RPC error; nothing stored or asked", async () => {
    const { key, id } = await adminKey(h.url, { tools: ["*"] });
    const { client } = await mcpClient(h.url, key);
    const asked = weather.authorizations.length + files.authorizations.length;
    const bad = [
      "files__read\u0000file",
      "files__read\u001b[31mfile",
      `files__${"r".repeat(10_000)}`,
      "files__read file",
    ];
    for (const name of bad) {
      expect(await errorCode(client.callTool({ name, arguments: { path: "a" } }))).toBe(ErrorCode.InvalidParams);
      expect(await errorCode(client.getPrompt({ name }))).toBe(ErrorCode.InvalidParams);
    }
    for (const uri of [
      "turnpike-mcp://weather/weather://st\u0000ations",
      "turnpike-mcp://weather/weather://st\u0007ations",
      `turnpike-mcp://weather/${"u".repeat(10_000)}`,
    ])
      expect(await errorCode(client.readResource({ uri }))).toBe(ErrorCode.InvalidParams);
    try {
      await client.callTool({ name: "files__read\u0000file", arguments: {} });
    } catch (e) {
      expect((e as Error).message).toContain('characters outside A-Z, a-z, 0-9, "_", "-", ".", "/"');
      expect((e as Error).message).not.toContain("\u0000");
    }
    expect(weather.authorizations.length + files.authorizations.length).toBe(asked);
    // The session still works, and nothing of the refused names was stored.
    expect(firstText(await client.callTool({ name: "files__read_file", arguments: { path: "ok" } }))).toBe(
      "contents of ok",
    );
    const rows = await waitFor("the one good call", async () => {
      const r = await usage(h.url, id);
      return r.length ? r : undefined;
    });
    expect(rows.map((r) => r.model)).toEqual(["files__read_file"]);
    await client.close();
  });

  test("/metrics stays the same size after 1,000 calls with made-up tool names (one `other` label)", async () => {
    const { key } = await adminKey(h.url, { tools: ["*"] });
    const { client } = await mcpClient(h.url, key);
    const series = async () =>
      (await (await fetch(`${h.url}/metrics`)).text())
        .split("\n")
        .filter((l) => l.startsWith("turnpike_mcp_") || l.startsWith("# "))
        .map((l) => l.replace(/ [^ ]+$/, ""))
        .join("\n");
    await errorCode(client.callTool({ name: "weather__made_up_warmup", arguments: {} }));
    const before = await series();
    // The SDK's upstream answers an unknown tool with an error result (`isError`), so these are 200s.
    expect(before).toContain('turnpike_mcp_tool_calls_total{server="weather",tool="other",status="200"}');
    for (let i = 0; i < 1000; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          errorCode(client.callTool({ name: `weather__made_up_${i + j}_${crypto.randomUUID()}`, arguments: {} })),
        ),
      );
    const after = await series();
    expect(after).toBe(before);
    expect(after).not.toContain("made_up");
    // A listed tool keeps its own label.
    await client.listTools();
    await client.callTool({ name: "weather__get_forecast", arguments: { city: "Lima" } });
    expect(await series()).toContain(
      'turnpike_mcp_tool_calls_total{server="weather",tool="get_forecast",status="200"}',
    );
    await client.close();
  }, 120_000);

  test("each request is a span over OTLP, with its method, server and request id", async () => {
    const { key, id } = await adminKey(h.url, { tools: ["*"] });
    const { client } = await mcpClient(h.url, key);
    await client.callTool({ name: "files__read_file", arguments: { path: "t" } });
    await client.listPrompts();
    await client.close();
    const rows = await waitFor("two rows", async () => {
      const r = await usage(h.url, id);
      return r.length === 2 ? r : undefined;
    });
    // Spans are exported in batches: wait for both (the receiver collects what arrives).
    const spans = await waitFor(
      "two spans",
      async () => {
        const s = receiver.spans.filter((x) => x.attributes["turnpike.key_id"] === id);
        return s.length === 2 ? s : undefined;
      },
      30_000,
    );
    expect(spans.map((s) => s.name).sort()).toEqual(["mcp prompts/list", "mcp tools/call"]);
    const call = spans.find((s) => s.name === "mcp tools/call")!;
    expect(call.attributes).toMatchObject({
      "turnpike.mcp.server": "files",
      "turnpike.operation.name": "files__read_file",
    });
    expect(new Set(spans.map((s) => String(s.attributes["turnpike.request_id"])))).toEqual(
      new Set(rows.map((r) => String(r.request_id))),
    );
  }, 60_000);
});
