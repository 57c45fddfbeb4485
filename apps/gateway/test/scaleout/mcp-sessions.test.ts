import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { admin, type Instance, newKey, removeDir, startInstance, waitFor } from "./cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "./servers";
import { errorCode, firstText, mcpClient, mcpConfigFile } from "../mcp/mcp-helpers";
import { startFiles, startWeather, type Upstream } from "../mcp/upstream-servers";

/**
 * Two gateway processes on one PostgreSQL and one Redis behind a round-robin balancer: one MCP
 * session's requests land on both, every tool call is in the shared ledger, one rpm bucket.
 */
describe.skipIf(!postgresUp || !redisUp)("MCP sessions across two instances", () => {
  let a: Instance;
  let b: Instance;
  let weather: Upstream;
  let files: Upstream;
  let balancer: ReturnType<typeof Bun.serve>;
  let lb: string;
  const served = { a: 0, b: 0 };
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    [weather, files] = await Promise.all([startWeather(), startFiles()]);
    cleanups.push(
      () => weather.stop(),
      () => files.stop(),
    );
    const db = await freshDatabase();
    const prefix = freshPrefix();
    cleanups.push(db.drop, prefix.drop);
    const config = mcpConfigFile({
      mcp_servers: [
        { name: "weather", url: weather.url },
        { name: "files", url: files.url },
      ],
    });
    const env = {
      TURNPIKE_DATABASE_URL: db.url,
      TURNPIKE_REDIS_URL: TEST_REDIS_URL,
      TURNPIKE_REDIS_PREFIX: prefix.prefix,
      TURNPIKE_CONFIG: config,
      TURNPIKE_DRAIN_SECONDS: "2",
    };
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
    cleanups.unshift(async () => {
      await Promise.all([a.stop(), b.stop()]);
      removeDir(a.journalDir);
      removeDir(b.journalDir);
    });
    // A balancer with no affinity at all: each request to the next instance in turn.
    let turn = 0;
    balancer = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      idleTimeout: 0,
      async fetch(req) {
        const to = turn++ % 2 === 0 ? a : b;
        served[to === a ? "a" : "b"] += 1;
        const url = new URL(req.url);
        return fetch(to.url + url.pathname + url.search, {
          method: req.method,
          headers: req.headers,
          body: req.body,
          redirect: "manual",
          signal: req.signal,
        });
      },
    });
    lb = `http://127.0.0.1:${balancer.port}`;
    cleanups.unshift(() => balancer.stop(true));
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  test("one session served by both instances: tools listed and called through either", async () => {
    const { id, key } = await newKey(a.url, { tools: ["*"] });
    await waitFor(
      "the key on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${id}`)).status === 200 || undefined,
    );
    const { client } = await mcpClient(lb, key);
    const before = { ...served };
    for (let i = 0; i < 4; i++) {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
        "files__delete_file",
        "files__read_file",
        "weather__big",
        "weather__fail",
        "weather__get_forecast",
        "weather__hang",
      ]);
      expect(firstText(await client.callTool({ name: "weather__get_forecast", arguments: { city: `City${i}` } }))).toBe(
        `Sunny in City${i}, 21 °C`,
      );
    }
    expect(served.a - before.a).toBeGreaterThanOrEqual(4);
    expect(served.b - before.b).toBeGreaterThanOrEqual(4);
    // The instance that did not get the initialize took the session up from Redis (its log line is
    // written in the logger's next batch, so it is waited for).
    await waitFor(
      "the take-up log line",
      async () => [a, b].some((i) => i.output().includes("mcp session taken up from the session store")) || undefined,
    );
    // Every request of both instances is in the one ledger: 4 lists and 4 calls.
    const rows = await waitFor("8 MCP records in PostgreSQL", async () => {
      const r = await admin(a.url, "GET", `/admin/usage?key_id=${id}`);
      const data = ((await r.json()) as { data: { endpoint: string; model: string; status: number }[] }).data;
      return data.length === 8 ? data : undefined;
    });
    expect(rows.every((r) => r.endpoint === "mcp" && r.status === 200)).toBe(true);
    expect(rows.filter((r) => r.model === "weather__get_forecast")).toHaveLength(4);
    expect(rows.filter((r) => r.model === "tools/list")).toHaveLength(4);
    await client.close();
  }, 60_000);

  test("a session ended on one instance is gone on the other", async () => {
    const { id, key } = await newKey(a.url, { tools: ["files__*"] });
    await waitFor(
      "the key on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${id}`)).status === 200 || undefined,
    );
    const { client, transport } = await mcpClient(a.url, key);
    const sid = transport.sessionId!;
    // The same session resumed directly on b, as a client reconnecting elsewhere would.
    const onB = await mcpClient(b.url, key, sid);
    expect(firstText(await onB.client.callTool({ name: "files__read_file", arguments: { path: "z" } }))).toBe(
      "contents of z",
    );
    await transport.terminateSession();
    expect(await errorCode(onB.client.listTools())).not.toBe("no error");
    const res = await fetch(`${b.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "mcp-session-id": sid,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(404);
    await client.close();
    await onB.client.close();
  });

  test("rpm 3 across both instances: 3 calls pass, the rest are refused", async () => {
    const { id, key } = await newKey(a.url, { tools: ["*"], rpm: 3 });
    await waitFor(
      "the key on b",
      async () => (await admin(b.url, "GET", `/admin/keys/${id}`)).status === 200 || undefined,
    );
    const { client } = await mcpClient(lb, key);
    const codes: (number | string)[] = [];
    for (let i = 0; i < 6; i++)
      codes.push(await errorCode(client.callTool({ name: "files__read_file", arguments: { path: String(i) } })));
    expect(codes.filter((c) => c === "no error")).toHaveLength(3);
    expect(codes.filter((c) => c === -32029)).toHaveLength(3);
    await client.close();
  });
});
