import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/vocabulary/config-error";
import { parseSignOn } from "../../src/config/sign-on-config";

const ENV = {
  TURNPIKE_OIDC_ISSUER: "https://login.example.com/",
  TURNPIKE_OIDC_CLIENT_ID: "turnpike",
  TURNPIKE_OIDC_CLIENT_SECRET: "s",
  TURNPIKE_PUBLIC_URL: "https://gateway.example.com/",
};

function problems(file: Record<string, unknown>, env: Record<string, string> = ENV): string[] {
  try {
    parseSignOn(file, env, "turnpike.yaml");
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  return [];
}

describe("sign_on config", () => {
  test("off without an issuer; defaults with one", () => {
    expect(parseSignOn({}, {}, "turnpike.yaml")).toBeUndefined();
    expect(parseSignOn({}, ENV, "turnpike.yaml")).toEqual({
      issuer: ENV.TURNPIKE_OIDC_ISSUER,
      clientId: "turnpike",
      clientSecret: "s",
      claim: "groups",
      map: [],
      publicUrl: "https://gateway.example.com",
      redirectUrl: "https://gateway.example.com/auth/callback",
      clockSkewS: 30,
      sessionMs: 12 * 3_600_000,
    });
  });

  test("the mapping is read as written", () => {
    const c = parseSignOn(
      {
        sign_on: {
          claim: "roles",
          map: [
            { value: "eng", team: "engineering", role: "member" },
            { value: "ops", role: "admin" },
          ],
          session_hours: 2,
        },
      },
      ENV,
      "f",
    );
    expect(c?.claim).toBe("roles");
    expect(c?.map).toEqual([
      { value: "eng", team: "engineering", role: "member" },
      { value: "ops", role: "admin" },
    ]);
    expect(c?.sessionMs).toBe(7_200_000);
  });

  test("every mistake at once, each naming where it is", () => {
    const schema = problems({ sign_on: { map: [{ value: "x", role: "boss" }], sesion_hours: 3 } });
    expect(schema).toHaveLength(2);
    expect(schema.every((p) => p.startsWith("turnpike.yaml: "))).toBe(true);
    expect(schema.join("\n")).toContain("role");
    expect(schema.join("\n")).toContain("sesion_hours");
    expect(
      problems({
        sign_on: {
          map: [
            { value: "eng", role: "member" },
            { value: "ops", team: "x", role: "admin" },
          ],
        },
      }),
    ).toEqual([
      "turnpike.yaml: sign_on.map[0]: role member needs a team",
      "turnpike.yaml: sign_on.map[1]: role admin is organisation-wide; remove team or use team-admin, member or viewer",
    ]);
    expect(problems({}, { TURNPIKE_OIDC_ISSUER: "not a url" })).toEqual([
      'TURNPIKE_OIDC_ISSUER must be an http:// or https:// URL, got "not a url"',
      "TURNPIKE_OIDC_CLIENT_ID must be set when TURNPIKE_OIDC_ISSUER is",
      "TURNPIKE_OIDC_CLIENT_SECRET must be set when TURNPIKE_OIDC_ISSUER is",
      "TURNPIKE_PUBLIC_URL must be set when TURNPIKE_OIDC_ISSUER is: the sign-in's redirect and the session cookie's Secure flag come from it, never from a request's Host header",
    ]);
    expect(problems({ sign_on: { claim: "groups" } }, {})).toEqual([
      "turnpike.yaml: sign_on: is set but TURNPIKE_OIDC_ISSUER is not; set the issuer URL or remove the section",
    ]);
  });

  test("sign-on needs the public URL; the redirect and the ID token's clock skew follow it", () => {
    const { TURNPIKE_PUBLIC_URL: _u, ...noPublic } = ENV;
    expect(problems({}, noPublic)).toEqual([
      "TURNPIKE_PUBLIC_URL must be set when TURNPIKE_OIDC_ISSUER is: the sign-in's redirect and the session cookie's Secure flag come from it, never from a request's Host header",
    ]);
    expect(problems({ sign_on: { redirect_url: "https://evil.example.net/auth/callback" } })).toEqual([
      'turnpike.yaml: sign_on.redirect_url: must be on TURNPIKE_PUBLIC_URL\'s origin https://gateway.example.com, got "https://evil.example.net/auth/callback"',
    ]);
    const c = parseSignOn(
      { sign_on: { redirect_url: "https://gateway.example.com/sso/back", clock_skew_seconds: 5 } },
      ENV,
      "f",
    );
    expect([c?.redirectUrl, c?.clockSkewS]).toEqual(["https://gateway.example.com/sso/back", 5]);
    expect(problems({ sign_on: { clock_skew_seconds: 3600 } }).join("\n")).toContain("clock_skew_seconds");
  });
});
