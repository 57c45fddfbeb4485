import { Type, type Static } from "@sinclair/typebox";
import { OpenEnum } from "./open.js";

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
  ttl: Type.Optional(OpenEnum(["5m", "1h"])),
});
export type CacheControl = Static<typeof CacheControl>;
