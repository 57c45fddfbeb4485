/**
 * Signed thinking carried through a generateContent client (docs/protocols.md §6.6). A messages
 * upstream requires the signed thinking blocks of a turn back with its tool calls; a client of
 * this format has no place for them but `thoughtSignature`, which it keeps on each function call
 * and sends back as it got it (Gemini CLI drops thought parts from its history, never the
 * signatures). So the turn's thinking blocks travel by value in that field, as an opaque token:
 * `tp1.` and the blocks as base64url JSON. Stateless: no store, any instance reads it.
 */
import type { ContentBlockParam } from "@turnpike/schema";

const PREFIX = "tp1.";

/** The blocks a token carries: signed thinking, or redacted thinking. */
export type ThoughtBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/** Whether a `thoughtSignature` is one Turnpike wrote (not a vendor's). */
export function isThoughtToken(signature: string): boolean {
  return signature.startsWith(PREFIX);
}

/** The token of a turn's signed thinking (undefined when it has none). */
export function encodeThoughtToken(blocks: readonly ThoughtBlock[]): string | undefined {
  if (blocks.length === 0) return undefined;
  return PREFIX + Buffer.from(JSON.stringify(blocks), "utf8").toString("base64url");
}

/** The thinking blocks a token carries; undefined for anything that is not a well-formed token. */
export function decodeThoughtToken(signature: string): ContentBlockParam[] | undefined {
  if (!isThoughtToken(signature)) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(signature.slice(PREFIX.length), "base64url").toString("utf8"));
    if (!Array.isArray(parsed)) return undefined;
    const out: ContentBlockParam[] = [];
    // Items are checked one by one below; a non-object reads as having no `type`.
    for (const b of parsed as (Record<string, unknown> | null)[]) {
      if (b?.type === "thinking" && typeof b.thinking === "string" && typeof b.signature === "string")
        out.push({ type: "thinking", thinking: b.thinking, signature: b.signature });
      else if (b?.type === "redacted_thinking" && typeof b.data === "string")
        out.push({ type: "redacted_thinking", data: b.data });
      else return undefined;
    }
    return out;
  } catch {
    return undefined;
  }
}
