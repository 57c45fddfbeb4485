import { PROTOCOLS } from "../protocols";
import type { Upstream } from "../vocabulary/target";
import type { VendorConfig } from "./vendors";

/**
 * Each vendor's upstream: its configured base and key, or — when its key is unset — the
 * built-in simulator at `simulatorURL`, speaking the same protocol.
 */
export function buildUpstreams(
  vendors: readonly VendorConfig[],
  simulatorURL: string | undefined,
): Map<string, Upstream> {
  const out = new Map<string, Upstream>();
  for (const v of vendors) {
    const protocol = PROTOCOLS[v.protocol];
    const auth = v.auth ?? protocol.auth;
    if (v.apiKey) {
      if (!v.baseURL)
        throw new Error(
          `vendor ${v.id}: a base URL must be set when ${v.apiKeyEnv} is (there is no default base URL for ${v.id}).`,
        );
      out.set(v.id, {
        vendor: v.id,
        protocol: v.protocol,
        baseURL: v.baseURL,
        apiKey: v.apiKey,
        auth,
        simulated: false,
      });
    } else {
      if (!simulatorURL) throw new Error(`no simulator running for ${v.id}`);
      out.set(v.id, {
        vendor: v.id,
        protocol: v.protocol,
        baseURL: protocol.simulatorBase(simulatorURL),
        apiKey: `simulator-${v.id}`,
        auth,
        simulated: true,
      });
    }
  }
  return out;
}

/** The vendors served by the simulator (no key set). */
export function vendorsNeedingSimulator(vendors: readonly VendorConfig[]): string[] {
  return vendors.filter((v) => !v.apiKey).map((v) => v.id);
}
