import type { RenderContext } from "./stream-plan";

// Slots for the per-request values of a rendered reply. U+2028/U+2029 pass through
// JSON.stringify unescaped, and a reply never holds this exact sequence otherwise.
const SEQ_SLOT = "\u2028seq\u2029";
const CREATED_SLOT = "\u2028created\u2029";
const SLOTS = /("\u2028created\u2029"|\u2028seq\u2029)/;

/** Render with this context to get a reply with slots in place of the request's sequence and time. */
export const TEMPLATE_CONTEXT: RenderContext = { seq: SEQ_SLOT, created: CREATED_SLOT };

/** A rendered reply split at its slots: even entries are text, odd entries name a slot. */
export type ReplyTemplate = string[];

/** `created` is rendered through JSON.stringify, so its slot arrives quoted and is filled with a bare number. */
export function compileTemplate(rendered: string): ReplyTemplate {
  return rendered.split(SLOTS);
}

export function fillTemplate(t: ReplyTemplate, seq: number, created: number): string {
  let out = t[0]!;
  for (let i = 1; i < t.length; i += 2) out += (t[i] === SEQ_SLOT ? seq : created) + t[i + 1]!;
  return out;
}
