/**
 * Dashboard sign-on against a real OpenID provider (the certified `oidc-provider` library, on
 * loopback, with its development login pages) in headless Chromium: the full authorization code
 * flow with PKCE, group claims mapped to teams and roles, the session cookie's attributes, a
 * member minting its own key, CSRF refused, sign-out; and an ID token that was tampered with,
 * or that has expired by the gateway's clock, refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { ensureDashboardBuilt } from "../../src/admin/dashboard-build";
import { ADMIN_KEY, startHarness, type Harness } from "../harness";
import { ADMIN_KEY as SCALEOUT_ADMIN_KEY, type Instance, removeDir, startInstance } from "../scaleout/cluster";
import { freshDatabase, postgresUp } from "../scaleout/servers";
import { CLIENT_ID, CLIENT_SECRET, freePort, startProvider, type TestProvider } from "./provider";

const CHROMIUM = process.env.TURNPIKE_CHROMIUM || "/usr/bin/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const STEP_MS = 60_000;
const step = existsSync(CHROMIUM) ? test : test.skip;

/** Each test user's groups at the provider. */
const GROUPS: Record<string, string[]> = { dana: ["eng"], olga: ["platform-admins"], nobody: [], kai: [] };
/** The config file's sign-on section, for the in-process gateways and the spawned ones alike. */
const SIGN_ON = {
  claim: "groups",
  map: [
    { value: "eng", team: "engineering", role: "member" },
    { value: "qa", team: "quality", role: "member" },
    { value: "qa-leads", team: "quality", role: "team-admin" },
    { value: "platform-admins", role: "admin" },
  ],
};

let dir: string;
let provider: TestProvider;
let issuer: string;
let browser: Browser;
const gateways: Harness[] = [];

/** A gateway that signs in at the test provider, with a mapping file; `fetch` sees the provider's answers. */
async function gatewayWith(opts: { now?: () => number; fetch?: typeof fetch } = {}): Promise<Harness> {
  const file = join(dir, "sign-on.json");
  writeFileSync(
    file,
    JSON.stringify({
      sign_on: SIGN_ON,
    }),
  );
  // The public URL (required with sign-on) names the port, so the port is chosen first.
  const port = await freePort();
  const h = await startHarness(
    {
      PORT: String(port),
      TURNPIKE_PUBLIC_URL: `http://127.0.0.1:${port}`,
      TURNPIKE_CONFIG: file,
      TURNPIKE_OIDC_ISSUER: issuer,
      TURNPIKE_OIDC_CLIENT_ID: CLIENT_ID,
      TURNPIKE_OIDC_CLIENT_SECRET: CLIENT_SECRET,
    },
    opts,
  );
  gateways.push(h);
  return h;
}

/** Signs in through the provider's own pages; returns where the browser ended. */
async function signIn(page: Page, gw: { url: string }, user: string): Promise<Response | null> {
  await page.goto(`${gw.url}/auth/login`);
  await page.locator('input[name="login"]').fill(user);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).waitFor();
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.url().startsWith(`${gw.url}/auth/callback`)),
    page.getByRole("button", { name: "Continue" }).click(),
  ]);
  await page.waitForLoadState();
  return res as unknown as Response; // playwright's Response: only status() and url() are read
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "turnpike-oidc-"));
  // The provider's port first (its issuer URL names it); its client is registered once each gateway's port is known.
  provider = await startProvider(GROUPS);
  issuer = provider.issuer;
  if (existsSync(CHROMIUM)) {
    ensureDashboardBuilt();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  }
}, STEP_MS);

afterAll(async () => {
  await browser?.close();
  for (const g of gateways) await g.close();
  provider?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** (Re)starts the provider with these gateways' callbacks registered. */
function serveProvider(gws: { url: string }[]): void {
  provider.serve(gws.map((g) => `${g.url}/auth/callback`));
}

describe("sign-on in headless Chromium", () => {
  let gw: Harness;
  let page: Page;
  beforeAll(async () => {
    gw = await gatewayWith();
    serveProvider([gw]);
    if (browser) page = await (await browser.newContext()).newPage();
  });

  step(
    "a developer signs in, lands in its team by its group, mints its own key, and signs out",
    async () => {
      const res = await signIn(page, gw, "dana");
      expect((res as unknown as { status(): number }).status()).toBe(303); // playwright's Response
      expect(new URL(page.url()).pathname).toBe("/dashboard");
      const [cookie] = (await page.context().cookies(gw.url)).filter((c) => c.name === "tp_session");
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false, path: "/" });
      // The page's own script cannot read it.
      expect(await page.evaluate(() => document.cookie)).not.toContain("tp_session");

      const me = await page.evaluate(async () => (await fetch("/auth/session")).json());
      expect(me.user.email).toBe("dana@example.com");
      expect(me.role).toBeNull();
      const teams = (await (
        await fetch(`${gw.url}/admin/teams`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).json()) as { data: { id: string; name: string }[] };
      const eng = teams.data.find((t) => t.name === "engineering");
      expect(eng).toBeDefined();
      expect(me.teams).toEqual({ [eng?.id ?? ""]: "member" });

      // A change without the CSRF token is refused; with it, the member mints a key for itself.
      const noCsrf = await page.evaluate(async (team) => {
        const r = await fetch("/admin/keys", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "my agent", team_id: team }),
        });
        return { status: r.status, body: await r.json() };
      }, eng?.id);
      expect(noCsrf.status).toBe(403);
      expect(noCsrf.body.error.code).toBe("csrf_failed");
      const minted = await page.evaluate(
        async ([team, csrf]) => {
          const r = await fetch("/admin/keys", {
            method: "POST",
            headers: { "content-type": "application/json", "x-csrf-token": csrf ?? "" },
            body: JSON.stringify({ name: "my agent", team_id: team }),
          });
          return { status: r.status, body: await r.json() };
        },
        [eng?.id, me.csrf_token] as const,
      );
      expect(minted.status).toBe(201);
      expect(minted.body.user_id).toBe(me.user.id);
      expect(minted.body.team_id).toBe(eng?.id);
      // The key works for inference.
      expect(
        (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${minted.body.key}` } })).status,
      ).toBe(200);
      // Another team's key and the user list are not a member's.
      expect(await page.evaluate(async () => (await fetch("/admin/users")).status)).toBe(403);
      // The audit log names the signed-in user: its sign-in, then its key.
      const audit = (await (
        await fetch(`${gw.url}/admin/audit?actor=user:${me.user.id}`, {
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        })
      ).json()) as { data: { action: string }[] };
      expect(audit.data.map((r) => r.action)).toEqual(["key.create", "session.create"]);

      // Sign-out needs the token too, then the session is over, on the server as well.
      const sessionCookie = cookie?.value ?? "";
      expect(await page.evaluate(async () => (await fetch("/auth/logout", { method: "POST" })).status)).toBe(403);
      expect(
        await page.evaluate(
          async (csrf) => (await fetch("/auth/logout", { method: "POST", headers: { "x-csrf-token": csrf } })).status,
          me.csrf_token as string,
        ),
      ).toBe(200);
      expect(await page.evaluate(async () => (await fetch("/auth/session")).status)).toBe(401);
      const replayed = await fetch(`${gw.url}/admin/keys`, { headers: { cookie: `tp_session=${sessionCookie}` } });
      expect(replayed.status).toBe(401);
    },
    STEP_MS,
  );

  step(
    "a platform admin's group makes it an admin; sessions are revoked with the user",
    async () => {
      const context = await browser.newContext();
      const p = await context.newPage();
      await signIn(p, gw, "olga");
      const me = await p.evaluate(async () => (await fetch("/auth/session")).json());
      expect(me.role).toBe("admin");
      expect(await p.evaluate(async () => (await fetch("/admin/users")).status)).toBe(200);
      // An admin's dashboard shows the audit log: its own making by sign-on is there.
      await p.getByRole("navigation", { name: "Views" }).getByRole("button", { name: "Audit", exact: true }).click();
      await p
        .getByRole("table", { name: "Audit log" })
        .getByRole("cell", { name: me.user.id, exact: true })
        .first()
        .waitFor();
      // Deleting the user (by the admin key) ends its sessions at once.
      await fetch(`${gw.url}/admin/users/${me.user.id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(await p.evaluate(async () => (await fetch("/admin/users")).status)).toBe(401);
      await context.close();
    },
    STEP_MS,
  );

  step(
    "an existing user's email is not taken over by a sign-in the provider does not vouch for",
    async () => {
      const made = await fetch(`${gw.url}/admin/users`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ email: "nobody@example.com", role: "viewer" }),
      });
      expect(made.status).toBe(201);
      const context = await browser.newContext();
      const p = await context.newPage();
      const res = await signIn(p, gw, "nobody");
      expect((res as unknown as { status(): number }).status()).toBe(401); // playwright's Response
      expect(await p.textContent("body")).toContain("does not vouch for this address");
      await context.close();
    },
    STEP_MS,
  );

  step(
    "the dashboard opens signed in after sign-on, offers sign-on on its sign-in page, and its Sign out ends the session",
    async () => {
      const context = await browser.newContext();
      const p = await context.newPage();
      await p.goto(`${gw.url}/dashboard`);
      await p.getByRole("link", { name: "sign in with your company account" }).click();
      await p.locator('input[name="login"]').waitFor();
      await p.goto(`${gw.url}/dashboard`);
      await signIn(p, gw, "dana");
      await p.getByRole("navigation", { name: "Views" }).waitFor();
      // No admin key in the tab: the cookie and the CSRF token carry the session.
      expect(await p.evaluate(() => sessionStorage.getItem("turnpike.adminKey"))).toBeNull();
      // A member sees its team, not the audit log.
      const views = p.getByRole("navigation", { name: "Views" });
      await views.getByRole("button", { name: "Teams", exact: true }).click();
      await p.getByRole("table", { name: "Teams" }).getByRole("cell", { name: "engineering", exact: true }).waitFor();
      expect(await views.getByRole("button", { name: "Audit", exact: true }).count()).toBe(0);
      await p.getByRole("button", { name: "Sign out" }).click();
      await p.getByLabel("Admin key").waitFor();
      let status = 200;
      for (let i = 0; i < 100 && status === 200; i++) {
        status = await p.evaluate(async () => (await fetch("/auth/session")).status);
        if (status === 200) await Bun.sleep(20);
      }
      expect(status).toBe(401);
      await context.close();
    },
    STEP_MS,
  );

  test("a callback without this browser's sign-in in progress is refused", async () => {
    const res = await fetch(`${gw.url}/auth/callback?code=abc&state=xyz`);
    expect(res.status).toBe(401);
    expect(await res.text()).toContain("no sign-in in progress");
    const forged = await fetch(`${gw.url}/auth/callback?code=abc&state=xyz`, {
      headers: { cookie: "tp_login=eyJ2ZXJpZmllciI6IngifQ.forged" },
    });
    expect(forged.status).toBe(401);
  });
});

describe("ID tokens that must be refused", () => {
  step(
    "a tampered ID token (its signature altered on the way) and one expired by the gateway's clock",
    async () => {
      // The token endpoint's answer with one character of the ID token's signature changed.
      const tampering: typeof fetch = Object.assign(
        async (input: string | URL | Request, init?: RequestInit) => {
          const res = await fetch(input, init);
          if (!String(input instanceof Request ? input.url : input).endsWith("/token")) return res;
          const body = (await res.json()) as { id_token: string };
          const last = body.id_token.at(-2) === "A" ? "B" : "A";
          body.id_token = body.id_token.slice(0, -2) + last + body.id_token.slice(-1);
          return Response.json(body, { status: res.status });
        },
        { preconnect: () => {} },
      );
      const tampered = await gatewayWith({ fetch: tampering });
      // Two hours ahead: the provider's ID token (valid for an hour) is expired on arrival.
      const later = await gatewayWith({ now: () => Date.now() + 2 * 3_600_000 });
      serveProvider([tampered, later]);
      for (const g of [tampered, later]) {
        const context = await browser.newContext();
        const p = await context.newPage();
        const res = await signIn(p, g, "dana");
        expect((res as unknown as { status(): number }).status()).toBe(401); // playwright's Response
        expect(await p.textContent("body")).toContain("did not pass its checks");
        expect((await context.cookies(g.url)).some((c) => c.name === "tp_session")).toBe(false);
        await context.close();
      }
    },
    STEP_MS * 2,
  );
});

/**
 * Sign-on gives and takes away: a user whose groups at the provider no longer name a team loses
 * that membership at its next sign-in; a membership an admin gave by hand stays. On the store
 * of the gateway at `url` (SQLite in process, or PostgreSQL behind a spawned gateway).
 */
async function claimsFollowed(url: string, adminKey: string): Promise<void> {
  const asAdmin = async (path: string, method = "GET", body?: unknown) =>
    (await (
      await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
    ).json()) as Record<string, unknown> & { data: Record<string, unknown>[] };
  const signedIn = async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, { url }, "kai");
    const me = (await page.evaluate(async () => (await fetch("/auth/session")).json())) as {
      user: { id: string };
      teams: Record<string, string>;
    };
    await context.close();
    return me;
  };
  const teamId = async (name: string) =>
    ((await asAdmin("/admin/teams")).data.find((t) => t.name === name)?.id as string | undefined) ?? "";
  const membersOf = async (name: string) =>
    (await asAdmin(`/admin/teams/${await teamId(name)}/members`)).data.map((m) => [m.user_id, m.role, m.source]);

  GROUPS.kai = ["eng", "qa", "qa-leads"];
  const first = await signedIn();
  const [eng, quality] = [await teamId("engineering"), await teamId("quality")];
  // Two rules name quality: the higher role wins.
  expect(first.teams).toEqual({ [eng]: "member", [quality]: "team-admin" });
  // An admin adds kai to a team by hand.
  const ops = (await asAdmin("/admin/teams", "POST", { name: `ops ${crypto.randomUUID().slice(0, 6)}` })).id as string;
  await asAdmin(`/admin/teams/${ops}/members`, "POST", { user_id: first.user.id, role: "viewer" });

  // Kai leaves the qa groups at the provider: at the next sign-in the quality membership is gone.
  GROUPS.kai = ["eng"];
  const second = await signedIn();
  expect(second.teams).toEqual({ [eng]: "member", [ops]: "viewer" });
  expect(await membersOf("quality")).not.toContainEqual(expect.arrayContaining([first.user.id]));
  expect(await membersOf("engineering")).toContainEqual([first.user.id, "member", "sign-on"]);
  const removed = (await asAdmin("/admin/audit?action=team.member.remove")).data;
  expect(removed.map((r) => [r.actor, r.target])).toContainEqual(["sign-on", `${quality}/${first.user.id}`]);

  // No groups at all: engineering goes too; the membership given by hand stays.
  GROUPS.kai = [];
  const third = await signedIn();
  expect(third.teams).toEqual({ [ops]: "viewer" });
  expect((await asAdmin(`/admin/teams/${ops}/members`)).data.map((m) => [m.user_id, m.role, m.source])).toEqual([
    [first.user.id, "viewer", "admin"],
  ]);
}

describe("a claim that no longer names a team", () => {
  step(
    "takes the membership away at the next sign-in, on SQLite",
    async () => {
      const gw = await gatewayWith();
      serveProvider([gw]);
      await claimsFollowed(gw.url, ADMIN_KEY);
    },
    STEP_MS * 2,
  );

  const withPostgres = existsSync(CHROMIUM) && postgresUp ? test : test.skip;
  withPostgres(
    "takes the membership away at the next sign-in, on PostgreSQL",
    async () => {
      const db = await freshDatabase();
      const file = join(dir, "sign-on-pg.json");
      writeFileSync(file, JSON.stringify({ sign_on: SIGN_ON }));
      let instance: Instance | undefined;
      const port = await freePort();
      try {
        instance = await startInstance({
          PORT: String(port),
          TURNPIKE_PUBLIC_URL: `http://127.0.0.1:${port}`,
          TURNPIKE_DATABASE_URL: db.url,
          TURNPIKE_CONFIG: file,
          TURNPIKE_OIDC_ISSUER: issuer,
          TURNPIKE_OIDC_CLIENT_ID: CLIENT_ID,
          TURNPIKE_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        });
        serveProvider([instance]);
        await claimsFollowed(instance.url, SCALEOUT_ADMIN_KEY);
      } finally {
        await instance?.stop();
        if (instance) removeDir(instance.journalDir);
        await db.drop();
      }
    },
    STEP_MS * 2,
  );
});
