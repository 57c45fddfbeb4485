import type { ClientRequest } from "../formats";
import type { RequestContext } from "../request/context";
import { jsonBody, readBodyText, type JsonBody } from "../request/read-body";
import { LARGE_BODY_CHARS, loopTurn } from "../vocabulary/loop-turns";

/** What validation finds: the client's request in its format, and the body's size in characters. */
export interface Validated {
  request: ClientRequest;
  size: number;
}

interface Limits {
  maxBodyBytes: number;
  maxBodyValues: number;
}

/**
 * Step 2: the body read as JSON (within the byte and value limits: 413) and checked by the client format's schema and rules (a 400 if
 * not). `named`: told the model the body names before it is checked (a refusal's log line says it).
 */
export async function validate(
  ctx: Pick<RequestContext, "request" | "format">,
  limits: Limits,
  named?: (model: string) => void,
): Promise<Validated> {
  return validateText(ctx, await readText(ctx, limits), limits, named);
}

/** Step 2's first half: the body's text, within the byte limit (the runtime's own promise where it can). */
export function readText(ctx: Pick<RequestContext, "request">, limits: Pick<Limits, "maxBodyBytes">): Promise<string> {
  return readBodyText(ctx.request, limits.maxBodyBytes);
}

/**
 * Step 2's second half, on the text {@link readText} read: at once for a small body (no promise,
 * no async frame: the hot path awaits only what is there), after turns of the loop for a large one.
 */
export function validateText(
  ctx: Pick<RequestContext, "format">,
  text: string,
  limits: Pick<Limits, "maxBodyValues">,
  named?: (model: string) => void,
): Validated | Promise<Validated> {
  const body = jsonBody(text, limits.maxBodyValues);
  return body instanceof Promise ? body.then((b) => checked(ctx, b, named)) : checked(ctx, body, named);
}

function checked(
  ctx: Pick<RequestContext, "format">,
  { value, size }: JsonBody,
  named: ((model: string) => void) | undefined,
): Validated | Promise<Validated> {
  if (typeof value.model === "string") named?.(value.model);
  // Parsed, then checked: a large body's two steps, with a turn of the event loop between.
  if (size > LARGE_BODY_CHARS) return loopTurn().then(() => ({ request: ctx.format.validate(value), size }));
  return { request: ctx.format.validate(value), size };
}
