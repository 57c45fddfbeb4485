import type { ClientRequest } from "../formats";
import type { RequestContext } from "./context";
import { readJsonBody } from "../http/read-body";
import { turnIfLarge } from "../vocabulary/loop-turns";

/**
 * Step 2: the body read as JSON (within the byte and value limits: 413) and checked by the client format's schema and rules (a 400 if
 * not). `named`: told the model the body names before it is checked (a refusal's log line says it).
 */
export async function validate(
  ctx: Pick<RequestContext, "request" | "format">,
  limits: { maxBodyBytes: number; maxBodyValues: number },
  named?: (model: string) => void,
): Promise<{ request: ClientRequest; size: number }> {
  const { value, size } = await readJsonBody(ctx.request, limits.maxBodyBytes, limits.maxBodyValues);
  if (typeof value.model === "string") named?.(value.model);
  // Parsed, then checked: a large body's two steps, with a turn of the event loop between.
  await turnIfLarge(size);
  return { request: ctx.format.validate(value), size };
}
