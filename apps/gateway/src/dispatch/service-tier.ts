import type { Warning } from "@turnpike/providers";
import { PROTOCOLS } from "../protocols";
import type { Format } from "../vocabulary/format";
import { SERVICE_TIERS, type CatalogEntry, type ServiceTier } from "../vocabulary/target";

/**
 * Service tiers (docs/protocols.md §5.5a): a client asks for one in its format's own
 * field; where the serving row prices that tier, the upstream is asked for it in its protocol's
 * field, the ledger bills every token at the row's price for it, and the reply says which tier
 * served. Elsewhere the call is served at the default tier, with a warning naming the field.
 */

/** Where each client format asks for a tier. The messages format has no per-request choice of a paid tier. */
const ASKED: Record<Format, string | undefined> = {
  chat: "service_tier",
  responses: "service_tier",
  generate: "serviceTier",
  // Its `service_tier` says whether the vendor may use capacity sold by commitment (`auto`) or
  // not (`standard_only`): no per-token price follows from it, so it asks for no tier here.
  messages: undefined,
};

/** The values that ask for the default tier (or leave the choice to the vendor, which Turnpike bills as default). */
const DEFAULTS = new Set(["auto", "default", "standard", "standard_only"]);

/** The tier a request asks for, as its format names it (undefined: none). */
export function askedTier(format: Format, body: Readonly<Record<string, unknown>>): string | undefined {
  const field = ASKED[format];
  const value = field === undefined ? undefined : body[field];
  return typeof value === "string" ? value : undefined;
}

/**
 * The tier a call is served and billed at on `entry`'s upstream: the asked one where the row
 * prices it and the protocol takes it (set in `body`, the upstream request), else the default
 * tier with a warning; `undefined` for the default tier.
 */
export function serveTier(
  format: Format,
  clientBody: Readonly<Record<string, unknown>>,
  entry: CatalogEntry,
  body: Record<string, unknown>,
  warnings: Warning[],
): ServiceTier | undefined {
  const asked = askedTier(format, clientBody);
  if (asked === undefined || DEFAULTS.has(asked)) return undefined;
  const field = ASKED[format] ?? "service_tier";
  const tier = SERVICE_TIERS.find((t) => t === asked);
  if (tier && entry.service_tiers?.[tier] !== undefined && PROTOCOLS[entry.protocol].serviceTier(body, tier))
    return tier;
  // A passthrough body would carry a paid tier on: the vendor would bill a tier the ledger does not.
  // A value Turnpike does not know goes on as sent (the open rest), billed at the default price.
  if (tier) {
    delete body.service_tier;
    delete body.serviceTier;
  }
  const offered = Object.keys(entry.service_tiers ?? {});
  warnings.push({
    param: field,
    message: `${entry.id} is not sold at the ${JSON.stringify(asked)} tier through Turnpike (${offered.length ? `it has ${offered.join(", ")}` : "it has the default tier only"}); served and billed at the default tier`,
  });
  return undefined;
}

/** The multiplier of `entry`'s prices at the tier the request asks for, where the row sells it (1 otherwise). */
export function askedPriceFactor(format: Format, body: Readonly<Record<string, unknown>>, entry: CatalogEntry): number {
  const asked = askedTier(format, body);
  const tier = SERVICE_TIERS.find((t) => t === asked);
  return (tier && entry.service_tiers?.[tier]) ?? 1;
}
