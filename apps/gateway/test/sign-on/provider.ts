/**
 * The real OpenID provider the sign-on tests use (the certified `oidc-provider` library on
 * loopback, with its development login and consent pages), and a sign-in driven through those
 * pages by plain HTTP with a cookie jar: the same requests a browser makes, where no browser is
 * installed.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export const CLIENT_ID = "turnpike-dashboard";
export const CLIENT_SECRET = "a-client-secret-for-the-loopback-provider-0123456789";

export interface TestProvider {
  issuer: string;
  /** Each user's groups at the provider (changed by tests between sign-ins). */
  groups: Record<string, string[]>;
  /** (Re)registers the client with these gateways' callbacks. */
  serve(redirectUris: string[]): void;
  close(): void;
}

export async function startProvider(groups: Record<string, string[]>): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`; // listening on TCP: an AddressInfo
  return {
    issuer,
    groups,
    serve(redirectUris) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: CLIENT_ID,
            client_secret: CLIENT_SECRET,
            redirect_uris: redirectUris,
            grant_types: ["authorization_code"],
            response_types: ["code"],
            token_endpoint_auth_method: "client_secret_basic",
          },
        ],
        claims: { openid: ["sub"], email: ["email"], profile: ["name"], groups: ["groups"] },
        scopes: ["openid", "email", "profile", "groups"],
        conformIdTokenClaims: false,
        pkce: { required: () => true },
        cookies: { keys: ["loopback-provider-cookie-key-0123456789"] },
        findAccount: async (_ctx, sub) => ({
          accountId: sub,
          claims: async () => ({ sub, email: `${sub}@example.com`, name: sub, groups: groups[sub] ?? [] }),
        }),
      });
      server.removeAllListeners("request");
      server.on("request", provider.callback());
    },
    close() {
      server.close();
    },
  };
}

/** A free loopback port, for a gateway whose public URL must be known before it starts. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as AddressInfo).port; // listening on TCP: an AddressInfo
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Cookies per host, as a browser keeps them (paths aside: every flow here is one at a time). */
export class CookieJar {
  private readonly jar = new Map<string, Map<string, string>>();

  take(url: string, res: Response): void {
    const host = new URL(url).host;
    const mine = this.jar.get(host) ?? new Map<string, string>();
    for (const line of res.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/max-age=0\b/i.test(line) || value === "") mine.delete(name);
      else mine.set(name, value);
    }
    this.jar.set(host, mine);
  }

  header(url: string): string {
    return [...(this.jar.get(new URL(url).host) ?? new Map<string, string>())].map(([n, v]) => `${n}=${v}`).join("; ");
  }

  get(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).host)?.get(name);
  }
}

/** One request with the jar's cookies, redirects not followed. */
export async function jarFetch(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const cookie = jar.header(url);
  if (cookie) headers.set("cookie", cookie);
  const res = await fetch(url, { ...init, headers, redirect: "manual" });
  jar.take(url, res);
  return res;
}

/**
 * Signs `user` in at `gatewayUrl` through the provider's own login and consent forms; answers
 * the gateway's reply to `/auth/callback` (303 when signed in) and its body.
 */
export async function signInOverHttp(
  jar: CookieJar,
  gatewayUrl: string,
  user: string,
): Promise<{ status: number; body: string }> {
  let res = await jarFetch(jar, `${gatewayUrl}/auth/login`);
  let url = `${gatewayUrl}/auth/login`;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(`${gatewayUrl}/auth/callback`)) return { status: res.status, body: await res.text() };
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get("location") ?? "", url).href;
      res = await jarFetch(jar, url);
      continue;
    }
    // A login or consent page: its form posted as a person would (any password is right in development).
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !action)
      throw new Error(`sign-in stopped at ${url} (${res.status}): ${html.slice(0, 300)}`);
    const form = new URLSearchParams();
    for (const [tag] of html.matchAll(/<input[^>]*>/g)) {
      const name = /name="([^"]+)"/.exec(tag)?.[1];
      if (name) form.set(name, /value="([^"]*)"/.exec(tag)?.[1] ?? "");
    }
    if (form.has("login")) form.set("login", user);
    if (form.has("password")) form.set("password", "any password");
    url = new URL(action, url).href;
    res = await jarFetch(jar, url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.toString(),
    });
  }
  throw new Error("sign-in did not come back to the gateway within 20 steps");
}
