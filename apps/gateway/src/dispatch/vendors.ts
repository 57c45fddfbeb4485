import type { Protocol } from "@turnpike/schema";
import type { AuthScheme } from "../vocabulary/target";

/** How a vendor's API key is sent. */
export const AUTH_SCHEMES: readonly AuthScheme[] = ["x-api-key", "bearer", "x-goog-api-key"];

/**
 * One vendor account: which protocol it speaks, where, and how its key is found and sent. The
 * four built-in words are default rows; a config file may change them or add more. A vendor
 * whose key is unset is served by the built-in simulator, speaking the same protocol.
 */
export interface VendorRow {
  id: string;
  protocol: Protocol;
  /** Base URL in the vendor client library's own convention (chat-protocol bases end in `/v1`). */
  base_url: string | undefined;
  /** How the key is sent; defaults to the protocol's own scheme. */
  auth: AuthScheme | undefined;
  /** The environment variable that holds the key. */
  api_key_env: string;
  /** The environment variable that may override the base URL. */
  base_url_env: string | undefined;
}

export const BUILT_IN_VENDORS: readonly VendorRow[] = [
  {
    id: "alpha",
    protocol: "messages",
    base_url: "https://api.anthropic.com",
    auth: undefined,
    api_key_env: "ALPHA_API_KEY",
    base_url_env: "ALPHA_BASE_URL",
  },
  {
    id: "beta",
    protocol: "chat",
    base_url: "https://api.openai.com/v1",
    auth: undefined,
    api_key_env: "BETA_API_KEY",
    base_url_env: "BETA_BASE_URL",
  },
  {
    id: "gamma",
    protocol: "generate",
    base_url: "https://generativelanguage.googleapis.com",
    auth: undefined,
    api_key_env: "GAMMA_API_KEY",
    base_url_env: "GAMMA_BASE_URL",
  },
  // A chat-completions-compatible vendor has no one official address: its base must be given.
  {
    id: "delta",
    protocol: "chat",
    base_url: undefined,
    auth: undefined,
    api_key_env: "DELTA_API_KEY",
    base_url_env: "DELTA_BASE_URL",
  },
];

/** A vendor as the gateway runs it: its row, with the key and base URL read from the environment. */
export interface VendorConfig {
  id: string;
  protocol: Protocol;
  auth: AuthScheme | undefined;
  baseURL: string | undefined;
  /** Unset = served by the built-in simulator. */
  apiKey: string | undefined;
  /** Where the key is read from (named in start-up messages). */
  apiKeyEnv: string;
}
