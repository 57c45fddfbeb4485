/**
 * Sign-on against what an attacker tried (issue 41, items 1–4 and 9), with the real OpenID
 * provider of the sign-on tests driven over plain HTTP: every session event in the audit log, a
 * refused sign-in flood bounded, the claim only raising a role, a member's key ending with its
 * membership, an ID token issued in the future refused, and no security value taken from the
 * request's Host header. The store-touching parts on SQLite in process and on a gateway process
 * on PostgreSQL and Redis.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/vocabulary/config-error";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { ADMIN_KEY as SCALEOUT_ADMIN_KEY, type Instance, removeDir, startInstance } from "../scaleout/cluster";
import { freshDatabase, freshPrefix, postgresUp, redisUp, TEST_REDIS_URL } from "../scaleout/servers";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  CookieJar,
  freePort,
  jarFetch,
  signInOverHttp,
  startProvider,
  type TestProvider,
} from "./provider";

const SIGN_ON = {
  claim: "groups",
  map: [
    { value: "eng", team: "engineering", role: "member" },
    { value: "platform-admins", role: "admin" },
  ],
};

let dir: string;
let provider: TestProvider;
const gateways: Harness[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "turnpike-sign-on-security-"));
  writeFileSync(join(dir, "sign-on.json"), JSON.stringify({ sign_on: SIGN_ON }));
  provider = await startProvider({ dana: ["eng"], olga: ["platform-admins"] });
});
afterAll(async () => {
  for (const g of gateways) await g.close();
  provider.close();
  rmSync(dir, { recursive: true, force: true });
});

const signOnEnv = (publicUrl: string): Record<string, string> => ({
  TURNPIKE_CONFIG: join(dir, "sign-on.json"),
  TURNPIKE_OIDC_ISSUER: provider.issuer,
  TURNPIKE_OIDC_CLIENT_ID: CLIENT_ID,
  TURNPIKE_OIDC_CLIENT_SECRET: CLIENT_SECRET,
  TURNPIKE_PUBLIC_URL: publicUrl,
});

/** An in-process gateway on SQLite, on a port known before it starts (its public URL names it). */
async function gateway(opts: { now?: () => number; publicUrl?: string } = {}): Promise<Harness> {
  const port = await freePort();
  const h = await startHarness(
    { PORT: String(port), ...signOnEnv(opts.publicUrl ?? `http://127.0.0.1:${port}`) },
    opts.now ? { now: opts.now } : {},
  );
  gateways.push(h);
  return h;
}

type Audit = { actor: string; action: string; target: string | null; address: string | null; after: unknown };

/**
 * Session events audited, refused sign-ins bounded, the claim only raising, a member's key
 * ending with its membership: on the gateway at `url`.
 */
async function sessionsScenario(url: string, adminKey: string): Promise<void> {
  const asAdmin = async (method: string, path: string, body?: unknown) =>
    (await (
      await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
    ).json()) as Record<string, unknown> & { data: Audit[] };
  const session = async (jar: CookieJar) =>
    (await (await jarFetch(jar, `${url}/auth/session`)).json()) as {
      user: { id: string };
      role: string | null;
      teams: Record<string, string>;
      csrf_token: string;
    };

  // Signed in, a key minted, signed out: each in the audit log under the user.
  const dana = new CookieJar();
  expect((await signInOverHttp(dana, url, "dana")).status).toBe(303);
  const me = await session(dana);
  const [eng] = Object.keys(me.teams);
  const minted = await jarFetch(dana, `${url}/admin/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-csrf-token": me.csrf_token },
    body: JSON.stringify({ name: "dana's agent", team_id: eng }),
  });
  expect(minted.status).toBe(201);
  const key = (await minted.json()) as { id: string; key: string };
  const out = await jarFetch(dana, `${url}/auth/logout`, {
    method: "POST",
    headers: { "x-csrf-token": me.csrf_token },
  });
  expect(out.status).toBe(200);
  const mine = (await asAdmin("GET", `/admin/audit?actor=user:${me.user.id}`)).data;
  expect(mine.map((r) => r.action)).toEqual(["session.end", "key.create", "session.create"]);
  expect(mine.every((r) => r.address !== null && r.target !== null)).toBe(true);

  // A refused sign-in is audited; a flood of them is cut off at the failure bound (30 a minute).
  const statuses: number[] = [];
  for (let i = 0; i < 35; i++) statuses.push((await fetch(`${url}/auth/callback?code=x&state=y`)).status);
  expect(statuses.slice(0, 30)).toEqual(Array(30).fill(401));
  expect(statuses.slice(30)).toEqual(Array(5).fill(429));
  const refused = (await asAdmin("GET", "/admin/audit?action=session.refuse&limit=1000")).data;
  expect(refused).toHaveLength(30);
  expect(refused[0]).toMatchObject({
    actor: "sign-on",
    after: { reason: expect.stringContaining("no sign-in in progress") },
  });

  // The claim raises (none → admin); a role set by hand above it stays (owner is not lowered to admin).
  const olga = new CookieJar();
  await signInOverHttp(olga, url, "olga");
  const olgaMe = await session(olga);
  expect(olgaMe.role).toBe("admin");
  await asAdmin("PATCH", `/admin/users/${olgaMe.user.id}`, { role: "owner" });
  const again = new CookieJar();
  await signInOverHttp(again, url, "olga");
  expect((await session(again)).role).toBe("owner");
  expect((await asAdmin("GET", `/admin/users/${olgaMe.user.id}`)).role).toBe("owner");

  // A member's key ends with its membership: by an admin's hand, and when the claim stops naming the team.
  expect((await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key.key}` } })).status).toBe(200);
  await asAdmin("DELETE", `/admin/teams/${eng}/members/${me.user.id}`);
  expect((await asAdmin("GET", `/admin/keys/${key.id}`)).revoked_at).not.toBeNull();
  expect((await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key.key}` } })).status).toBe(401);
  const back = new CookieJar();
  await signInOverHttp(back, url, "dana");
  const backMe = await session(back);
  const second = (await (
    await jarFetch(back, `${url}/admin/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": backMe.csrf_token },
      body: JSON.stringify({ name: "dana's second", team_id: eng }),
    })
  ).json()) as { id: string };
  provider.groups.dana = [];
  try {
    await signInOverHttp(new CookieJar(), url, "dana");
  } finally {
    provider.groups.dana = ["eng"];
  }
  expect((await asAdmin("GET", `/admin/keys/${second.id}`)).revoked_at).not.toBeNull();
  const ended = (await asAdmin("GET", "/admin/audit?action=key.revoke")).data;
  expect(ended.find((r) => r.target === second.id)).toMatchObject({
    actor: "sign-on",
    after: { reason: "maker left" },
  });

  // Deleting the user revokes the keys it made in its teams.
  const last = new CookieJar();
  await signInOverHttp(last, url, "dana");
  const lastMe = await session(last);
  const third = (await (
    await jarFetch(last, `${url}/admin/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": lastMe.csrf_token },
      body: JSON.stringify({ name: "dana's third", team_id: eng }),
    })
  ).json()) as { id: string };
  expect((await asAdmin("GET", `/admin/keys/${third.id}`)).revoked_at).toBeNull();
  await asAdmin("DELETE", `/admin/users/${lastMe.user.id}`);
  expect((await asAdmin("GET", `/admin/keys/${third.id}`)).revoked_at).not.toBeNull();
}

describe("sessions on SQLite", () => {
  test("audited, refusals bounded, the claim only raising, a member's key ending with its membership", async () => {
    const gw = await gateway();
    provider.serve([`${gw.url}/auth/callback`]);
    await sessionsScenario(gw.url, ADMIN_KEY);
  }, 60_000);
});

const scaled = postgresUp && redisUp ? describe : describe.skip;
scaled("sessions on PostgreSQL and Redis", () => {
  test("the same, on a gateway process", async () => {
    const db = await freshDatabase();
    const prefix = freshPrefix();
    const port = await freePort();
    let instance: Instance | undefined;
    try {
      instance = await startInstance({
        PORT: String(port),
        TURNPIKE_DATABASE_URL: db.url,
        TURNPIKE_REDIS_URL: TEST_REDIS_URL,
        TURNPIKE_REDIS_PREFIX: prefix.prefix,
        ...signOnEnv(`http://127.0.0.1:${port}`),
      });
      provider.serve([`${instance.url}/auth/callback`]);
      await sessionsScenario(instance.url, SCALEOUT_ADMIN_KEY);
    } finally {
      await instance?.stop();
      if (instance) removeDir(instance.journalDir);
      await db.drop();
      await prefix.drop();
    }
  }, 120_000);
});

describe("ID token times", () => {
  test("issued an hour ahead of the gateway's clock: refused; within the skew: accepted", async () => {
    const behind = await gateway({ now: () => Date.now() - 3_600_000 });
    const slightly = await gateway({ now: () => Date.now() - 10_000 });
    provider.serve([`${behind.url}/auth/callback`, `${slightly.url}/auth/callback`]);
    const jar = new CookieJar();
    const refused = await signInOverHttp(jar, behind.url, "dana");
    expect(refused.status).toBe(401);
    expect(refused.body).toContain("did not pass its checks");
    expect(jar.get(behind.url, "tp_session")).toBeUndefined();
    const audit = (await (
      await fetch(`${behind.url}/admin/audit?action=session.refuse`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      })
    ).json()) as { data: Audit[] };
    expect(JSON.stringify(audit.data[0]?.after)).toContain("iat");
    expect((await signInOverHttp(new CookieJar(), slightly.url, "dana")).status).toBe(303);
  }, 60_000);
});

/**
 * The gateway's calls to the provider with the ID token re-signed by a key of the test's own
 * (whose JWKS replaces the provider's) after `change` alters its claims: a hand-forged token
 * whose signature checks, so that only its times can refuse it.
 */
async function forging(change: (claims: Record<string, unknown>) => void): Promise<typeof fetch> {
  const { privateKey, publicKey } = await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  );
  const jwk = { ...(await crypto.subtle.exportKey("jwk", publicKey)), kid: "forged", alg: "RS256", use: "sig" };
  const b64 = (b: ArrayBuffer | Uint8Array | string) => Buffer.from(b as Uint8Array).toString("base64url");
  return Object.assign(
    async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.endsWith("/jwks")) return Response.json({ keys: [jwk] });
      const res = await fetch(input, init);
      if (!url.endsWith("/token")) return res;
      const body = (await res.json()) as { id_token: string };
      const claims = JSON.parse(Buffer.from(body.id_token.split(".")[1] ?? "", "base64url").toString("utf8"));
      change(claims);
      const signing = `${b64(JSON.stringify({ alg: "RS256", typ: "JWT", kid: "forged" }))}.${b64(JSON.stringify(claims))}`;
      const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", privateKey, new TextEncoder().encode(signing));
      body.id_token = `${signing}.${b64(new Uint8Array(signature))}`;
      return Response.json(body, { status: res.status });
    },
    { preconnect: () => {} },
  );
}

describe("hand-forged ID token times (signature good, times not)", () => {
  test("iat or nbf an hour ahead: refused; nbf within the skew: accepted", async () => {
    const hour = () => Math.floor(Date.now() / 1000) + 3600;
    const cases: [string, (c: Record<string, unknown>) => void, number][] = [
      ["iat an hour ahead", (c) => Object.assign(c, { iat: hour(), exp: hour() + 3600 }), 401],
      ["nbf an hour ahead", (c) => Object.assign(c, { nbf: hour() }), 401],
      ["nbf 10 s ahead", (c) => Object.assign(c, { nbf: Math.floor(Date.now() / 1000) + 10 }), 303],
      ["unchanged", () => {}, 303],
    ];
    const gws: Harness[] = [];
    for (const [, change] of cases) {
      const port = await freePort();
      const h = await startHarness(
        { PORT: String(port), ...signOnEnv(`http://127.0.0.1:${port}`) },
        { fetch: await forging(change) },
      );
      gateways.push(h);
      gws.push(h);
    }
    provider.serve(gws.map((g) => `${g.url}/auth/callback`));
    for (const [i, [what, , status]] of cases.entries()) {
      const res = await signInOverHttp(new CookieJar(), gws[i]?.url ?? "", "dana");
      expect([what, res.status]).toEqual([what, status]);
    }
  }, 60_000);
});

describe("no security value from the Host header", () => {
  test("sign-on without TURNPIKE_PUBLIC_URL does not start", async () => {
    const { TURNPIKE_PUBLIC_URL: _u, ...env } = signOnEnv("unused");
    const error = await startHarness(env).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.join("\n")).toContain("TURNPIKE_PUBLIC_URL must be set");
  });

  test("the redirect and the cookie's Secure flag come from the public URL, whatever the Host says", async () => {
    const tls = await gateway({ publicUrl: "https://gateway.example.com" });
    const plain = await gateway();
    for (const [gw, host] of [
      [tls, "127.0.0.1"],
      [plain, "gateway.example.com"],
      [plain, "evil.example.net"],
    ] as const) {
      const res = await fetch(`${gw.url}/auth/login`, {
        redirect: "manual",
        headers: { host, "x-forwarded-host": "evil.example.net", "x-forwarded-proto": "https" },
      });
      expect(res.status).toBe(302);
      const redirect = new URL(res.headers.get("location") ?? "").searchParams.get("redirect_uri");
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith("tp_login=")) ?? "";
      if (gw === tls) {
        expect(redirect).toBe("https://gateway.example.com/auth/callback");
        expect(cookie).toContain("; Secure");
      } else {
        expect(redirect).toBe(`${plain.url}/auth/callback`);
        expect(cookie).not.toContain("Secure");
      }
    }
  });
});
