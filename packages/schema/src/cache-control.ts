import { Type, type Static } from "@sinclair/typebox";

/**
 * Prompt-cache breakpoint (messages format, docs/protocols.md §1.3). Allowed on content blocks,
 * system text blocks, tools, and (newer API) top level.
 *
 * @example
 * ```ts
 * const cc: CacheControl = { type: "ephemeral", ttl: "1h" };
 * ```
 */
export const CacheControl = Type.Object({
  type: Type.Literal("ephemeral"),
  ttl: Type.Optional(Type.Union([Type.Literal("5m"), Type.Literal("1h")])),
});
export type CacheControl = Static<typeof CacheControl>;
