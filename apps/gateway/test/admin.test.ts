import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCli } from "../src/cli";
import { ADMIN_KEY, startHarness, type Harness } from "./harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const admin = (path: string, init: RequestInit = {}) =>
  fetch(h.url + path, { ...init, headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(init.headers ?? {}) } });

describe("admin API", () => {
  test("refuses a wrong admin key", async () => {
    const res = await fetch(`${h.url}/admin/keys`, { headers: { authorization: "Bearer nope" } });
    expect(res.status).toBe(401);
    const list = await fetch(`${h.url}/admin/keys`, { headers: { authorization: `Bearer ${h.key}` } });
    expect(list.status).toBe(401);
  });

  test("create shows the secret once; list never shows it; revoke refuses the key at once", async () => {
    const created = await admin("/admin/keys", {
      method: "POST",
      body: JSON.stringify({ name: "ci", models: ["beta-*"], rpm: 60 }),
    });
    expect(created.status).toBe(201);
    const k = (await created.json()) as any;
    expect(k.key).toMatch(/^sk-/);
    expect(k.id).toMatch(/^key_/);
    expect(k.models).toEqual(["beta-*"]);
    expect(k.rpm).toBe(60);
    expect(k.tpm).toBeNull();

    const listText = await (await admin("/admin/keys")).text();
    expect(listText).not.toContain(k.key);
    const listed = (JSON.parse(listText) as any).data.find((x: any) => x.id === k.id);
    expect(listed.name).toBe("ci");
    expect(listed.hash).toBeUndefined();

    const ok = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${k.key}` } });
    expect(ok.status).toBe(200);
    const del = await admin(`/admin/keys/${k.id}`, { method: "DELETE" });
    expect(del.status).toBe(200);
    expect(((await del.json()) as any).revoked_at).not.toBeNull();
    const refused = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${k.key}` } });
    expect(refused.status).toBe(401);
    expect((await admin("/admin/keys/key_nope", { method: "DELETE" })).status).toBe(404);
  });

  test("bad key bodies are 400s that name the field", async () => {
    const res = await admin("/admin/keys", { method: "POST", body: JSON.stringify({ name: "", rpm: -1 }) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.message).toContain("name");
    const r2 = await admin("/admin/keys", { method: "POST", body: JSON.stringify({ name: "x", rpm: 1.5 }) });
    expect(((await r2.json()) as any).error.message).toContain("rpm");
  });

  test("usage records one row per call with tokens and cost", async () => {
    const res = await h.call("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ model: "delta-m3", messages: [{ role: "user", content: "count me" }] }),
    });
    const body = (await res.json()) as any;
    const rid = res.headers.get("x-request-id");
    const usage = (await (await admin(`/admin/usage?key_id=${h.keyId}&model=delta-m3`)).json()) as any;
    const row = usage.data.find((r: any) => r.request_id === rid);
    expect(row.endpoint).toBe("chat");
    expect(row.stream).toBe(false);
    expect(row.input_tokens).toBe(body.usage.prompt_tokens);
    expect(row.output_tokens).toBe(body.usage.completion_tokens);
    expect(row.status).toBe(200);
    expect(row.aborted).toBe(false);
    // delta-m3: $0.3 in, $1.2 out per million.
    expect(row.cost_usd).toBeCloseTo((row.input_tokens * 0.3 + row.output_tokens * 1.2) / 1e6, 12);
    const bad = await admin("/admin/usage?since=yesterday");
    expect(bad.status).toBe(400);
  });
});

describe("CLI", () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      io: {
        env: { TURNPIKE_URL: h.url, TURNPIKE_ADMIN_KEY: ADMIN_KEY },
        fetch,
        out: (l: string) => out.push(l),
        err: (l: string) => err.push(l),
      },
    };
  };

  test("keys create, list and revoke", async () => {
    const a = io();
    expect(
      await runCli(
        ["keys", "create", "--name", "from-cli", "--models", "alpha-*,beta-5", "--tpm", "1000", "--tools", "*"],
        a.io,
      ),
    ).toBe(0);
    const created = JSON.parse(a.out.join("\n"));
    expect(created.name).toBe("from-cli");
    expect(created.models).toEqual(["alpha-*", "beta-5"]);
    expect(created.tpm).toBe(1000);
    expect(created.tools).toEqual(["*"]);
    const b = io();
    expect(await runCli(["keys", "list"], b.io)).toBe(0);
    expect(JSON.parse(b.out.join("\n")).data.some((k: any) => k.id === created.id)).toBe(true);
    const c = io();
    expect(await runCli(["keys", "revoke", created.id], c.io)).toBe(0);
    expect(JSON.parse(c.out.join("\n")).revoked).toBe(true);
  });

  test("errors are clear and exit non-zero", async () => {
    const a = io();
    expect(await runCli(["keys", "create"], a.io)).toBe(2);
    expect(a.err.join()).toContain("--name");
    const b = io();
    b.io.env.TURNPIKE_ADMIN_KEY = "wrong";
    expect(await runCli(["keys", "list"], b.io)).toBe(2);
    expect(b.err.join()).toContain("401");
  });
});
