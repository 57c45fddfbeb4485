import { GatewayError } from "@turnpike/providers";

/** The request body as JSON; malformed JSON or a non-object is a 400 that says what was wrong. */
export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  return (await readJsonBody(request)).value;
}

/** The body as JSON, with its size in characters (a cheap input-token estimate for admission). */
export async function readJsonBody(request: Request): Promise<{ value: Record<string, unknown>; size: number }> {
  const text = await request.text();
  if (text.trim() === "") throw invalid("Request body is empty: expected a JSON object.");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw invalid(`Request body is not valid JSON: ${(e instanceof Error ? e.message : String(e))}.`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw invalid(`Request body must be a JSON object, got ${Array.isArray(parsed) ? "an array" : typeof parsed === "object" ? "null" : typeof parsed}.`);
  }
  return { value: parsed as Record<string, unknown>, size: text.length }; // a non-null, non-array object: checked just above
}

export function invalid(message: string, param?: string): GatewayError {
  return new GatewayError({ status: 400, type: "invalid_request_error", message, ...(param ? { param } : {}) });
}

/** A failed schema check as one 400: the first issue names field and rule; the next few follow. */
export function validationError(issues: { path: string; message: string }[]): GatewayError {
  const first = issues[0];
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more: ${issues.slice(1, 4).map((i) => i.message).join("; ")})` : "";
  return invalid(`${first?.message ?? "invalid request"}${more}`, first?.path);
}
