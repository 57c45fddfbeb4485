/** Records a request for assertions, validating its body as the gateway would. */
import {
  validateChatRequest,
  validateCountTokensRequest,
  validateGenerateRequest,
  validateEmbeddingsRequest,
  validateMessagesRequest,
  validateResponsesRequest,
  type ValidationIssue,
} from "@turnpike/schema";
import type { CapturedRequest, MockEndpoint } from "./captured-request.js";

/** The record, and the body as the validator accepted it (`undefined` when invalid or absent). */
export async function captureRequest(
  request: Request,
  endpoint: MockEndpoint,
  pathModel?: string,
  pathStream?: boolean,
): Promise<{ captured: CapturedRequest; valid: unknown }> {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => (headers[name] = value));
  const text = request.method === "GET" ? "" : await request.text();
  let body: unknown;
  let issues: string[] = [];
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      issues = [`The body is not valid JSON: ${text.slice(0, 100)}`];
    }
  }
  let valid: unknown;
  if (issues.length === 0 && body !== undefined) {
    const result = validatorOf(endpoint)?.(body);
    if (result && !result.ok) issues = result.issues.map((issue: ValidationIssue) => issue.message);
    else if (result?.ok) valid = result.value;
  }
  const fields: object = typeof body === "object" && body !== null ? body : {};
  const captured: CapturedRequest = {
    endpoint,
    method: request.method,
    url: request.url,
    headers,
    body,
    apiKey:
      request.headers.get("x-api-key") ??
      request.headers.get("x-goog-api-key") ??
      request.headers.get("authorization")?.replace(/^Bearer\s+/i, "") ??
      new URL(request.url).searchParams.get("key") ??
      undefined,
    model: pathModel ?? ("model" in fields && typeof fields.model === "string" ? fields.model : undefined),
    stream: pathStream ?? ("stream" in fields && fields.stream === true),
    issues,
  };
  return { captured, valid };
}

function validatorOf(endpoint: MockEndpoint) {
  switch (endpoint) {
    case "messages":
      return validateMessagesRequest;
    case "chat":
      return validateChatRequest;
    case "count_tokens":
      return validateCountTokensRequest;
    case "responses":
    case "input_tokens":
      return validateResponsesRequest;
    case "generate":
      return validateGenerateRequest;
    case "generate_count_tokens":
      return validateGenerateCount;
    case "embeddings":
      return validateEmbeddingsRequest;
    case "models":
    case "model":
    case "response":
    case "files":
    case "batches":
    case "message_batches":
      return undefined;
    default: {
      const unreachable: never = endpoint;
      throw new Error(`unknown endpoint ${String(unreachable)}`);
    }
  }
}

/** A count request's prompt: its `generateContentRequest`, or the body itself (`{contents}`). */
function validateGenerateCount(body: unknown) {
  const inner =
    typeof body === "object" && body !== null && "generateContentRequest" in body ? body.generateContentRequest : body;
  return validateGenerateRequest(inner);
}
