import { derivedFrom } from "../protocols/body-text";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A reasoning item's encrypted content: the Responses format's thinking proof, opened only by the vendor that wrote it. */
function proofOf(item: unknown): string | undefined {
  return isObject(item) && item.type === "reasoning" && typeof item.encrypted_content === "string"
    ? item.encrypted_content
    : undefined;
}

/** Every reasoning proof in a Responses body's input, in order. */
export function reasoningProofs(body: Readonly<Record<string, unknown>>): string[] {
  if (!Array.isArray(body.input)) return [];
  return body.input.map(proofOf).filter((p): p is string => p !== undefined);
}

/**
 * A Responses body without the reasoning items whose proof `drop` names, or undefined when it
 * names none. The new body is written from the client's text but for `input` (protocols/body-text.ts).
 */
export function withoutReasoning(
  body: Readonly<Record<string, unknown>>,
  drop: (proof: string) => boolean,
): { body: Record<string, unknown>; dropped: number } | undefined {
  if (!Array.isArray(body.input)) return undefined;
  const input = body.input.filter((item: unknown) => {
    const proof = proofOf(item);
    return proof === undefined || !drop(proof);
  });
  const dropped = body.input.length - input.length;
  if (dropped === 0) return undefined;
  const out = { ...body, input };
  derivedFrom(out, body);
  return { body: out, dropped };
}
