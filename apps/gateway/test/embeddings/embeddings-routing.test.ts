/**
 * Embeddings through the routing the inference routes use: several deployments of an embedding
 * model, a failing deployment moves the call to the next one and then to the model's fallback
 * (across protocols), its breaker opens and closes, a session stays on one deployment, a hung
 * upstream times out; the reply and the ledger say where the call was served.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { ADMIN_KEY, type Harness } from "../harness";
import { recordOf, routedGateway } from "../routing/setup";

let h: Harness;
let client: OpenAI;
let clock = Date.now();
beforeAll(async () => {
  h = await routedGateway(
    `
vendors:
  beta-backup: { protocol: chat }
  gamma-backup: { protocol: generate }
models:
  - id: beta-embedding-3-small
    deployments:
      - { vendor: beta, weight: 1000000 }
      - { vendor: beta-backup, weight: 1 }
    fallbacks: [gamma-embedding-1]
  - id: beta-embedding-3-large
    deployments: [{ vendor: beta }, { vendor: beta-backup }]
  - id: gamma-embedding-1
    deployments:
      - { vendor: gamma, weight: 1000000 }
      - { vendor: gamma-backup, weight: 1 }
    timeouts: { connect_ms: 300 }
routing:
  breaker: { failures: 2, cooldown_s: 30 }
`,
    { now: () => clock },
  );
  client = new OpenAI({ apiKey: h.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});
afterAll(() => h.close());
beforeEach(() => {
  h.gw.simulator!.clearFaults();
  clock += 3_600_000; // a fresh hour: every circuit an earlier test opened has cooled down
});

const sim = () => h.gw.simulator!;
/** The simulator's requests since `from` that carried vendor `vendor`'s key. */
const sentTo = (from: number, vendor: string) =>
  sim()
    .requests.slice(from)
    .filter((r) => {
      const key = r.headers["x-goog-api-key"] ?? (r.headers.authorization ?? "").replace(/^Bearer /, "");
      return key === `simulator-${vendor}`;
    });

async function embed(model: string, input: string | number[] | string[], headers: Record<string, string> = {}) {
  const { data, response } = await client.embeddings
    .create({ model, input, encoding_format: "float" }, { headers })
    .withResponse();
  return { data, headers: response.headers, res: response };
}

async function deploymentState(model: string, name: string): Promise<{ state: string; failures: number }> {
  const res = await fetch(`${h.url}/admin/deployments`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const { data } = (await res.json()) as {
    data: { model: string; deployment: string; state: string; failures: number }[];
  };
  return data.find((d) => d.model === model && d.deployment === name)!;
}

describe("deployments and fallbacks", () => {
  test("healthy: the first deployment serves in one attempt, and the headers say so", async () => {
    const from = sim().requests.length;
    const r = await embed("beta-embedding-3-small", "routing healthy");
    expect(r.data.model).toBe("beta-embedding-3-small");
    expect(r.headers.get("x-turnpike-model")).toBe("beta-embedding-3-small");
    expect(r.headers.get("x-turnpike-deployment")).toBe("beta");
    expect(r.headers.get("x-turnpike-attempts")).toBe("1");
    expect(r.headers.get("x-turnpike-upstream")).toBe("simulator");
    expect(r.headers.get("x-turnpike-fallback-from")).toBeNull();
    expect(sentTo(from, "beta")).toHaveLength(1);
    expect(sentTo(from, "beta-backup")).toHaveLength(0);
  });

  test("the first deployment fails (503): the second serves the same vectors; the ledger names it", async () => {
    const before = (await embed("beta-embedding-3-small", "same text on both")).data.data[0]!.embedding;
    sim().fault("simulator-beta", { status: 503 });
    const from = sim().requests.length;
    const r = await embed("beta-embedding-3-small", "same text on both");
    expect(r.headers.get("x-turnpike-deployment")).toBe("beta-backup");
    expect(r.headers.get("x-turnpike-attempts")).toBe("2");
    expect(r.data.data[0]!.embedding).toEqual(before);
    expect(sentTo(from, "beta")).toHaveLength(1);
    expect(sentTo(from, "beta-backup")).toHaveLength(1);
    const row = await recordOf(h, r.res);
    expect(row).toMatchObject({
      model: "beta-embedding-3-small",
      endpoint: "embeddings",
      status: 200,
      deployment: "beta-backup",
      attempts: 2,
    });
    expect(row.requested_model ?? undefined).toBeUndefined();
  });

  test("both deployments fail: the fallback serves, across protocols, priced as the fallback", async () => {
    sim().fault("simulator-beta", { status: 529 });
    sim().fault("simulator-beta-backup", { status: 500 });
    const from = sim().requests.length;
    const r = await embed("beta-embedding-3-small", ["fallback one", "fallback two"]);
    expect(r.data.model).toBe("gamma-embedding-1");
    expect(r.data.data).toHaveLength(2);
    expect(r.data.data[0]!.embedding).toHaveLength(3072);
    expect(r.headers.get("x-turnpike-model")).toBe("gamma-embedding-1");
    expect(r.headers.get("x-turnpike-fallback-from")).toBe("beta-embedding-3-small");
    expect(r.headers.get("x-turnpike-deployment")).toBe("gamma");
    expect(r.headers.get("x-turnpike-attempts")).toBe("3");
    // The generateContent protocol's call for several inputs.
    const [gamma] = sentTo(from, "gamma");
    expect(gamma!.path).toContain(":batchEmbedContents");
    const row = await recordOf(h, r.res);
    expect(row).toMatchObject({
      model: "gamma-embedding-1",
      requested_model: "beta-embedding-3-small",
      deployment: "gamma",
      attempts: 3,
      status: 200,
    });
    expect(row.cost_usd).toBeCloseTo((row.input_tokens * 0.15) / 1e6, 9);
  });

  test("every deployment and fallback fails: the last error, in the chat envelope, recorded unbilled", async () => {
    for (const v of ["beta", "beta-backup", "gamma", "gamma-backup"]) sim().fault(`simulator-${v}`, { status: 503 });
    const err = (await client.embeddings
      .create({ model: "beta-embedding-3-small", input: "nowhere" })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.status).toBe(503);
    expect(err.headers?.get("x-turnpike-attempts")).toBe("4");
    expect(err.headers?.get("x-turnpike-fallback-from")).toBe("beta-embedding-3-small");
    await h.gw.deps.ledger.flush();
    const rows = await h.gw.deps.store.queryUsage({ key_id: h.keyId, limit: 10_000 });
    const row = rows.find((x) => x.request_id === err.headers?.get("x-request-id"))!;
    expect(row).toMatchObject({ status: 503, upstream_status: 503, attempts: 4, cost_usd: 0, input_tokens: 0 });
  });

  test("a 400 from the upstream is the answer: no other deployment is asked", async () => {
    sim().fault("simulator-beta", { status: 400, message: "input rejected upstream" });
    const from = sim().requests.length;
    const err = (await client.embeddings
      .create({ model: "beta-embedding-3-small", input: "refused" })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toContain("input rejected upstream");
    expect(err.headers?.get("x-turnpike-attempts")).toBe("1");
    expect(sentTo(from, "beta-backup")).toHaveLength(0);
  });

  test("token ids, after the chat deployments failed: the text-only fallback cannot take them, the last error stands", async () => {
    sim().fault("simulator-beta", { status: 503 });
    sim().fault("simulator-beta-backup", { status: 503 });
    const from = sim().requests.length;
    const err = (await client.embeddings
      .create({ model: "beta-embedding-3-small", input: [1, 2, 3] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(503);
    expect(err.headers?.get("x-turnpike-attempts")).toBe("2");
    expect(sentTo(from, "gamma")).toHaveLength(0);
  });
});

describe("breaker", () => {
  test("two failures open the circuit: the next call skips the deployment; after the cooldown one probe closes it", async () => {
    // A success first: the consecutive failures earlier tests left start over.
    expect((await embed("beta-embedding-3-small", "breaker start")).headers.get("x-turnpike-deployment")).toBe("beta");
    sim().fault("simulator-beta", { status: 500 });
    for (let i = 0; i < 2; i++) {
      const r = await embed("beta-embedding-3-small", `breaker ${i}`);
      expect(r.headers.get("x-turnpike-attempts")).toBe("2");
    }
    expect((await deploymentState("beta-embedding-3-small", "beta")).state).toBe("open");
    let from = sim().requests.length;
    const skipped = await embed("beta-embedding-3-small", "breaker skipped");
    expect(skipped.headers.get("x-turnpike-deployment")).toBe("beta-backup");
    expect(skipped.headers.get("x-turnpike-attempts")).toBe("1");
    expect(sentTo(from, "beta")).toHaveLength(0);
    // The cooldown passes and the upstream recovers: the probe goes to it and closes the circuit.
    sim().clearFaults();
    clock += 31_000;
    from = sim().requests.length;
    const probe = await embed("beta-embedding-3-small", "breaker probe");
    expect(probe.headers.get("x-turnpike-deployment")).toBe("beta");
    expect(sentTo(from, "beta")).toHaveLength(1);
    expect((await deploymentState("beta-embedding-3-small", "beta")).state).toBe("closed");
  });
});

describe("sessions", () => {
  test("a session header keeps one deployment of two equal ones; when it fails, the session moves", async () => {
    const where = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const r = await embed("beta-embedding-3-large", `session ${i}`, { "x-session-id": "embed-session-1" });
      where.add(r.headers.get("x-turnpike-deployment")!);
    }
    expect(where.size).toBe(1);
    const [home] = [...where];
    const other = home === "beta" ? "beta-backup" : "beta";
    sim().fault(`simulator-${home}`, { status: 503 });
    const moved = await embed("beta-embedding-3-large", "session moved", { "x-session-id": "embed-session-1" });
    expect(moved.headers.get("x-turnpike-deployment")).toBe(other);
    expect(moved.headers.get("x-turnpike-attempts")).toBe("2");
    // Once moved, it stays where it now is, even with its first deployment healthy again.
    sim().clearFaults();
    const after = await embed("beta-embedding-3-large", "session after", { "x-session-id": "embed-session-1" });
    expect(after.headers.get("x-turnpike-deployment")).toBe(other);
  });

  test("without a session, calls spread over two equal deployments", async () => {
    const where = new Set<string>();
    for (let i = 0; i < 40 && where.size < 2; i++)
      where.add((await embed("beta-embedding-3-large", `spread ${i}`)).headers.get("x-turnpike-deployment")!);
    expect([...where].sort()).toEqual(["beta", "beta-backup"]);
  });
});

describe("timeouts", () => {
  test("a hung deployment times out after the model's connect_ms and the next one serves", async () => {
    sim().fault("simulator-gamma", { hang: true });
    const r = await embed("gamma-embedding-1", "hung upstream");
    expect(r.headers.get("x-turnpike-deployment")).toBe("gamma-backup");
    expect(r.headers.get("x-turnpike-attempts")).toBe("2");
    expect(r.data.data[0]!.embedding).toHaveLength(3072);
  });
});
