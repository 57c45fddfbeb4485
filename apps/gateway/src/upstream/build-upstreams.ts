import type { Config } from "../config";
import { VENDORS, VENDOR_PROTOCOL, type Vendor } from "../routing/catalog";
import type { Upstream } from "./upstream";

/** Official base URLs, each in its vendor client library's own convention (DESIGN.md §3). */
export const DEFAULT_BASE_URL: Record<Vendor, string | undefined> = {
  alpha: "https://api.anthropic.com",
  beta: "https://api.openai.com/v1",
  gamma: "https://generativelanguage.googleapis.com",
  delta: undefined,
};

/**
 * Each vendor's upstream: its configured base and key, or — when its key is unset — the
 * built-in simulator at `simulatorURL`, speaking the same protocol.
 */
export function buildUpstreams(config: Config, simulatorURL: string | undefined): Record<Vendor, Upstream> {
  const out = {} as Record<Vendor, Upstream>;
  for (const v of VENDORS) {
    const c = config.vendors[v];
    if (c.apiKey) {
      const baseURL = c.baseURL ?? DEFAULT_BASE_URL[v];
      if (!baseURL) throw new Error(`${v.toUpperCase()}_BASE_URL must be set when ${v.toUpperCase()}_API_KEY is (no default base URL for ${v}).`);
      out[v] = { vendor: v, baseURL, apiKey: c.apiKey, simulated: false };
    } else {
      if (!simulatorURL) throw new Error(`no simulator running for ${v}`);
      const chat = VENDOR_PROTOCOL[v] === "chat";
      out[v] = { vendor: v, baseURL: chat ? `${simulatorURL}/v1` : simulatorURL, apiKey: `simulator-${v}`, simulated: true };
    }
  }
  return out;
}

export function vendorsNeedingSimulator(config: Config): Vendor[] {
  return VENDORS.filter((v) => !config.vendors[v].apiKey);
}
