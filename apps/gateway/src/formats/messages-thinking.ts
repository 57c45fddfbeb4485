import { derivedFrom } from "../protocols/body-text";

/** What stands for a turn whose every block was thinking that cannot be replayed (a turn is never empty). */
const OMITTED = { type: "text", text: "(earlier reasoning omitted)" } as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The opaque proof of a thinking block: a `thinking` block's signature, a `redacted_thinking` block's data. */
function proofOf(block: unknown): string | undefined {
  if (!isObject(block)) return undefined;
  if (block.type === "thinking" && typeof block.signature === "string") return block.signature;
  if (block.type === "redacted_thinking" && typeof block.data === "string") return block.data;
  return undefined;
}

/** Every thinking proof in a messages-format body's history, in order. */
export function thinkingProofs(body: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  if (!Array.isArray(body.messages)) return out;
  for (const m of body.messages) {
    if (!isObject(m) || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      const proof = proofOf(b);
      if (proof !== undefined) out.push(proof);
    }
  }
  return out;
}

/**
 * A messages-format body without the thinking blocks `drop` names (by their proof), or undefined
 * when it names none. Only the messages that lose a block are copied; the new body is written
 * from the client's text but for `messages` (protocols/body-text.ts).
 */
export function withoutThinking(
  body: Readonly<Record<string, unknown>>,
  drop: (proof: string) => boolean,
): { body: Record<string, unknown>; dropped: number } | undefined {
  if (!Array.isArray(body.messages)) return undefined;
  let dropped = 0;
  const messages = body.messages.map((m: unknown) => {
    if (!isObject(m) || !Array.isArray(m.content)) return m;
    const kept = m.content.filter((b: unknown) => {
      const proof = proofOf(b);
      return proof === undefined || !drop(proof);
    });
    if (kept.length === m.content.length) return m;
    dropped += m.content.length - kept.length;
    return { ...m, content: kept.length ? kept : [OMITTED] };
  });
  if (dropped === 0) return undefined;
  const out = { ...body, messages };
  derivedFrom(out, body);
  return { body: out, dropped };
}
