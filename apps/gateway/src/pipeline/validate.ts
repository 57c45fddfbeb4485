import type { ClientRequest } from "../formats";
import type { RequestContext } from "./context";
import { readJsonBody } from "../http/read-body";

/**
 * Step 2: the body read as JSON and checked by the client format's schema and rules (a 400 if
 * not). `named`: told the model the body names before it is checked (a refusal's log line says it).
 */
export async function validate(
  ctx: Pick<RequestContext, "request" | "format">,
  maxBytes: number,
  named?: (model: string) => void,
): Promise<{ request: ClientRequest; size: number }> {
  const { value, size } = await readJsonBody(ctx.request, maxBytes);
  if (typeof value.model === "string") named?.(value.model);
  return { request: ctx.format.validate(value), size };
}
