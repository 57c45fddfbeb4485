/**
 * Where a client sends its calls. Both SDKs read the same `TURNPIKE_BASE_URL`, so each accepts
 * the gateway origin (`http://localhost:8080`) and also a base that already ends in `/v1` (the
 * chat completions convention), and derives its own base from it.
 */
import { readEnv } from "./env.js";
import { TurnpikeError } from "./errors.js";

/** The gateway's default address (`PORT` defaults to 8080, site/guide/configuration.md "Configuration"). */
export const DEFAULT_BASE_URL = "http://localhost:8080";

/**
 * `http://host:8080/v1/` → `http://host:8080`; a non-URL is a clear error.
 *
 * @example
 * ```ts
 * gatewayOrigin("http://localhost:8080/v1"); // "http://localhost:8080"
 * ```
 */
export function gatewayOrigin(base: string): string {
  const trimmed = base.trim().replace(/\/+$/, "").replace(/\/v1$/, "");
  let protocol = "";
  try {
    protocol = new URL(trimmed).protocol;
  } catch {
    // not a URL at all; reported below
  }
  // `new URL("localhost:8080")` parses (as scheme "localhost:"), so check the scheme too.
  if (protocol !== "http:" && protocol !== "https:") {
    throw new TurnpikeError(`baseURL must be an absolute http(s) URL such as ${DEFAULT_BASE_URL}, got "${base}"`);
  }
  return trimmed;
}

/**
 * The API key and gateway origin from the options, else `TURNPIKE_API_KEY` / `TURNPIKE_BASE_URL`.
 *
 * @example
 * ```ts
 * const { apiKey, origin } = resolveCredentials(options, "ChatClient");
 * ```
 */
export function resolveCredentials(
  options: { apiKey?: string | undefined; baseURL?: string | undefined },
  clientName: string,
): { apiKey: string; origin: string } {
  const apiKey = options.apiKey ?? readEnv("TURNPIKE_API_KEY");
  if (!apiKey) {
    throw new TurnpikeError(
      `Missing API key: pass it as new ${clientName}({ apiKey }) or set the TURNPIKE_API_KEY environment variable.`,
    );
  }
  return { apiKey, origin: gatewayOrigin(options.baseURL ?? readEnv("TURNPIKE_BASE_URL") ?? DEFAULT_BASE_URL) };
}
