/**
 * The gateway's shared words, on the lowest tier: every other folder may import them, and they
 * import nothing of the gateway (docs/design.md, "Tiers of folders").
 */
export { invalid, isRecord, validationError } from "./client-errors";
export { ConfigError, configProblems, refuse } from "./config-error";
export type { Endpoint, Format } from "./format";
export type { AuthScheme, CatalogEntry, PromptCacheMode, Target, Upstream } from "./target";
export type { TokenCounts, UsageSink } from "./usage-sink";
