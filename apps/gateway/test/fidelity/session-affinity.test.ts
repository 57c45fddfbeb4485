/**
 * Sessions stay on one deployment (dispatch/affinity.ts): a session's turns go to the deployment
 * that served its first one while it is healthy — across instances through Redis; when it fails
 * over, thinking its history carries from the old deployment is not replayed to the new one, and
 * the ledger marks the turn whose prompt cache started over (`cache_reset_from`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { freshPrefix, redisUp, TEST_REDIS_URL } from "../scaleout/servers";

const CONFIG = `
vendors:
  alpha-backup: { protocol: messages }
models:
  - id: alpha-haiku-4-5
    deployments: [{ vendor: alpha }, { vendor: alpha-backup }]
  - id: alpha-opus-4-8
    deployments: [{ vendor: alpha }, { vendor: alpha-backup }]
routing:
  breaker: { failures: 1000, cooldown_s: 30 }
`;
const MODEL = "alpha-haiku-4-5";
/** A model with the same deployment names, to learn where the stable hash puts a session without placing it. */
const PROBE_MODEL = "alpha-opus-4-8";
/** The simulator vendor behind each deployment (a fault on it fails that deployment). */
const SIM_VENDOR: Record<string, string> = { alpha: "simulator-alpha", "alpha-backup": "simulator-alpha-backup" };

function configFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), "turnpike-affinity-")), "turnpike.yaml");
  writeFileSync(file, CONFIG);
  return file;
}

type Json = Record<string, any>; // replies read field by field

async function turn(
  h: Harness,
  messages: unknown[],
  headers: Record<string, string>,
): Promise<{ res: Response; body: Json; deployment: string | null }> {
  const res = await h.call("/v1/messages", {
    method: "POST",
    dialect: "messages",
    headers,
    body: JSON.stringify({
      model: MODEL,
      max_tokens: 2048,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages,
    }),
  });
  const body = (await res.json()) as Json;
  return { res, body, deployment: res.headers.get("x-turnpike-deployment") };
}

async function ledgerRow(h: Harness, requestId: string | null): Promise<Json | undefined> {
  const res = await fetch(`${h.url}/admin/usage?key_id=${h.keyId}&limit=1000`, {
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  return ((await res.json()) as { data: Json[] }).data.find((r) => r.request_id === requestId);
}

/** A session that lands on `want` first: tries ids until the stable hash sends one there. */
async function sessionOn(h: Harness, want: string, tag: string): Promise<string> {
  for (let i = 0; i < 64; i++) {
    const id = `${tag}-${i}`;
    if ((await turn(h, [{ role: "user", content: "Hi" }], { "x-claude-code-session-id": id })).deployment === want)
      return id;
  }
  throw new Error(`no session landed on ${want}`);
}

describe("one instance", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ TURNPIKE_CONFIG: configFile() });
  });
  afterAll(() => h.close());

  test("every session id the agents send keeps its turns on one deployment", async () => {
    const ways: Record<string, string>[] = [
      { "x-claude-code-session-id": "cc-1" },
      { "x-opencode-session": "oc-1" },
      { session_id: "codex-1" },
    ];
    for (const headers of ways) {
      const seen = new Set<string | null>();
      for (let i = 0; i < 6; i++)
        seen.add((await turn(h, [{ role: "user", content: `Turn ${i}` }], headers)).deployment);
      expect(seen.size).toBe(1);
    }
    // The body's session marker, when no header names one.
    const seen = new Set<string | null>();
    for (let i = 0; i < 6; i++) {
      const res = await h.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        body: JSON.stringify({
          model: MODEL,
          max_tokens: 32,
          metadata: { user_id: "user_1_account__session_body-7" },
          messages: [{ role: "user", content: "Hi" }],
        }),
      });
      seen.add(res.headers.get("x-turnpike-deployment"));
    }
    expect(seen.size).toBe(1);
  });

  test("failover: the session moves, foreign thinking is not replayed, the ledger marks the cache reset, and it stays moved", async () => {
    const session = await sessionOn(h, "alpha", "think");
    const headers = { "x-claude-code-session-id": session };
    const ask1 = [{ role: "user", content: 'Plan it [sim think text="First answer."]' }];
    const t1 = await turn(h, ask1, headers);
    expect(t1.deployment).toBe("alpha");
    const thinking = t1.body.content.find((b: Json) => b.type === "thinking");
    expect(thinking.signature).toBeString();

    // The session's deployment fails: the next turn goes to the other, without alpha's thinking.
    h.gw.simulator!.fault(SIM_VENDOR.alpha!, { status: 503 });
    const history = [
      ...ask1,
      { role: "assistant", content: t1.body.content },
      { role: "user", content: 'Go on with the whole plan and write every step out [sim think text="Second answer."]' },
    ];
    const t2 = await turn(h, history, headers);
    h.gw.simulator!.clearFaults();
    expect(t2.res.status).toBe(200);
    expect(t2.deployment).toBe("alpha-backup");
    const sent = h.gw.simulator!.requests.at(-1)!;
    expect(JSON.stringify(sent.body)).not.toContain(thinking.signature);
    expect(JSON.stringify(sent.body)).toContain("First answer.");
    const warning = t2.res.headers.get("x-turnpike-warning") ?? "";
    expect(warning).toContain("moved from deployment alpha to alpha-backup");
    expect(warning).toContain(
      "1 earlier thinking item(s) written by another deployment were not replayed to alpha-backup",
    );
    expect(await ledgerRow(h, t2.res.headers.get("x-request-id"))).toMatchObject({
      deployment: "alpha-backup",
      cache_reset_from: "alpha",
    });
    expect((await ledgerRow(h, t1.res.headers.get("x-request-id")))?.cache_reset_from).toBeUndefined();

    // Alpha is healthy again, but the session's cache is on the backup now: it stays. Alpha's
    // thinking is still left out; the backup's own goes back to it.
    const thinking2 = t2.body.content.find((b: Json) => b.type === "thinking");
    expect(thinking2.signature).not.toBe(thinking.signature);
    const history3 = [...history, { role: "assistant", content: t2.body.content }, { role: "user", content: "Thanks" }];
    const t3 = await turn(h, history3, headers);
    expect(t3.deployment).toBe("alpha-backup");
    const sent3 = JSON.stringify(h.gw.simulator!.requests.at(-1)!.body);
    expect(sent3).not.toContain(thinking.signature);
    expect(sent3).toContain(thinking2.signature);
    expect(t3.res.headers.get("x-turnpike-warning")).not.toContain("moved");
    expect((await ledgerRow(h, t3.res.headers.get("x-request-id")))?.cache_reset_from).toBeUndefined();
  });
});

describe("a Responses client on a Responses vendor with two deployments", () => {
  let h: Harness;
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), "turnpike-affinity-r-")), "turnpike.yaml");
    writeFileSync(
      file,
      `
vendors:
  epsilon: { protocol: responses, base_url: "https://epsilon.example/v1" }
  epsilon-backup: { protocol: responses, base_url: "https://epsilon-backup.example/v1" }
models:
  - { id: epsilon-5, owned_by: epsilon, input_per_mtok: 1.25, output_per_mtok: 10, context_window: 400000, max_output_tokens: 128000, deployments: [{ vendor: epsilon }, { vendor: epsilon-backup }] }
routing:
  breaker: { failures: 1000, cooldown_s: 30 }
`,
    );
    h = await startHarness({ TURNPIKE_CONFIG: file });
  });
  afterAll(() => h.close());

  const ask = (input: unknown[], key: string) =>
    h.call("/v1/responses", {
      method: "POST",
      body: JSON.stringify({
        model: "epsilon-5",
        prompt_cache_key: key,
        include: ["reasoning.encrypted_content"],
        store: false,
        input,
      }),
    });

  test("a failover does not send the old deployment's encrypted reasoning to the new one", async () => {
    let key = "";
    let first: Json | undefined;
    const ask1 = [{ role: "user", content: 'Plan it [sim think text="First."]' }];
    for (let i = 0; i < 64 && !key; i++) {
      const res = await ask(ask1, `conv-${i}`);
      if (res.headers.get("x-turnpike-deployment") === "epsilon")
        [key, first] = [`conv-${i}`, (await res.json()) as Json];
    }
    const reasoning = first!.output.find((o: Json) => o.type === "reasoning");
    expect(reasoning.encrypted_content).toBeString();
    h.gw.simulator!.fault("simulator-epsilon", { status: 503 });
    const res = await ask(
      [...ask1, ...first!.output, { role: "user", content: "Go on with every step of the plan" }],
      key,
    );
    h.gw.simulator!.clearFaults();
    expect(res.status).toBe(200);
    expect(res.headers.get("x-turnpike-deployment")).toBe("epsilon-backup");
    const sent = JSON.stringify(h.gw.simulator!.requests.at(-1)!.body);
    expect(sent).not.toContain(reasoning.encrypted_content);
    expect(sent).toContain("Go on with every step");
    expect(res.headers.get("x-turnpike-warning")).toContain(
      "1 earlier thinking item(s) written by another deployment were not replayed to epsilon-backup",
    );
  });
});

describe.skipIf(!redisUp)("two instances sharing Redis", () => {
  let a: Harness;
  let b: Harness;
  let alone: Harness;
  let prefix: ReturnType<typeof freshPrefix>;
  beforeAll(async () => {
    prefix = freshPrefix();
    const file = configFile();
    const env = { TURNPIKE_CONFIG: file, TURNPIKE_REDIS_URL: TEST_REDIS_URL, TURNPIKE_REDIS_PREFIX: prefix.prefix };
    [a, b, alone] = await Promise.all([startHarness(env), startHarness(env), startHarness({ TURNPIKE_CONFIG: file })]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close(), alone.close()]);
    await prefix.drop();
  });

  test("a session that failed over on one instance is served where it moved on the other", async () => {
    // A session the stable hash puts on alpha: found on the other model, whose deployments have the
    // same names (the hash reads the session and the name), so this model has no place for it yet.
    let session = "";
    for (let i = 0; i < 64 && !session; i++) {
      const res = await b.call("/v1/messages", {
        method: "POST",
        dialect: "messages",
        headers: { "x-claude-code-session-id": `shared-${i}` },
        body: JSON.stringify({ model: PROBE_MODEL, max_tokens: 16, messages: [{ role: "user", content: "Hi" }] }),
      });
      if (res.headers.get("x-turnpike-deployment") === "alpha") session = `shared-${i}`;
    }
    expect(session).not.toBe("");
    const headers = { "x-claude-code-session-id": session };
    // Its first turn, on A, finds alpha failing and is served by the backup: that is its place.
    a.gw.simulator!.fault(SIM_VENDOR.alpha!, { status: 503 });
    const first = await turn(a, [{ role: "user", content: "Hi" }], headers);
    a.gw.simulator!.clearFaults();
    expect(first.deployment).toBe("alpha-backup");
    // B, where alpha never failed, sends the session's turns where A put it; so does A.
    for (let i = 0; i < 3; i++) {
      expect((await turn(b, [{ role: "user", content: `Turn ${i}` }], headers)).deployment).toBe("alpha-backup");
      expect((await turn(a, [{ role: "user", content: `Turn ${i}` }], headers)).deployment).toBe("alpha-backup");
    }
    // An instance that does not share the map goes by the hash alone.
    expect((await turn(alone, [{ role: "user", content: "Hi" }], headers)).deployment).toBe("alpha");
  });
});
