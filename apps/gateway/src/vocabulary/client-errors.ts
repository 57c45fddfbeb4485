import { GatewayError } from "@turnpike/providers";

/** A 400 `invalid_request_error`, naming the field at fault where there is one. */
export function invalid(message: string, param?: string): GatewayError {
  return new GatewayError({ status: 400, type: "invalid_request_error", message, ...(param ? { param } : {}) });
}

/** A failed schema check as one 400: the first issue names field and rule; the next few follow. */
export function validationError(issues: { path: string; message: string }[]): GatewayError {
  const first = issues[0];
  const more =
    issues.length > 1
      ? ` (and ${issues.length - 1} more: ${issues
          .slice(1, 4)
          .map((i) => i.message)
          .join("; ")})`
      : "";
  return invalid(`${first?.message ?? "invalid request"}${more}`, first?.path);
}

export { isRecord } from "@turnpike/schema";
