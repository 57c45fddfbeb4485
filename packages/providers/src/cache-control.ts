/**
 * Whether a messages-format request sets a prompt-cache breakpoint anywhere — top level, system
 * blocks, message blocks (tool results' content included) or tool definitions. Chat and
 * generateContent upstreams have no breakpoints, so any of them is a warning there
 * (README "Warning vs 400"), never a silent drop.
 */
import type { MessagesRequest } from "@turnpike/schema";
import { isRecord } from "./json.js";

function blocksUse(blocks: unknown): boolean {
  if (!Array.isArray(blocks)) return false;
  return blocks.some((b) => isRecord(b) && (b.cache_control != null || blocksUse(b.content)));
}

export function usesCacheControl(req: MessagesRequest): boolean {
  if (req.cache_control != null) return true;
  if (blocksUse(req.system)) return true;
  if (req.messages.some((m) => blocksUse(m.content))) return true;
  return blocksUse(req.tools);
}
