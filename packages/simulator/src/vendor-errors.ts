import type { Protocol } from "./simulator-options";

/** An error reply before any byte: status, JSON body text and extra headers. */
export interface ErrorReply {
  status: number;
  body: string;
  headers: Record<string, string>;
}

export interface ErrorContext {
  model?: string;
  /** Overrides the table's default message. */
  message?: string;
  /** Chat-protocol `param` and `code` of a validation error. */
  param?: string | null;
  code?: string | null;
  /** Seconds for `retry-after` (and generateContent's RetryInfo) on 429/503/529. Default 1. */
  retryAfter?: number;
  requestId?: string;
}

// docs/protocols.md §1.8: error.type and a message the real API uses, by HTTP status.
const MESSAGES: Record<number, [string, string]> = {
  400: ["invalid_request_error", "Invalid request."],
  401: ["authentication_error", "invalid x-api-key"],
  402: [
    "billing_error",
    "Your credit balance is too low to access the API. Please go to Plans & Billing to upgrade or purchase credits.",
  ],
  403: ["permission_error", "Your API key does not have permission to use the specified resource."],
  404: ["not_found_error", "The requested resource could not be found."],
  413: ["request_too_large", "Request exceeds the maximum allowed number of bytes."],
  429: [
    "rate_limit_error",
    "Number of request tokens has exceeded your per-minute rate limit. Please try again later.",
  ],
  500: ["api_error", "Internal server error"],
  504: ["timeout_error", "Request timed out"],
  529: ["overloaded_error", "Overloaded"],
};

// docs/protocols.md §2.7: [type, code, message].
const CHAT: Record<number, [string, string | null, string]> = {
  400: ["invalid_request_error", null, "Invalid request."],
  401: [
    "invalid_request_error",
    "invalid_api_key",
    "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
  ],
  403: ["invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported"],
  404: [
    "invalid_request_error",
    "model_not_found",
    "The model `{model}` does not exist or you do not have access to it.",
  ],
  429: ["requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 1s."],
  500: ["server_error", null, "The server had an error while processing your request. Sorry about that!"],
  503: ["service_unavailable_error", "server_is_overloaded", "The server is overloaded or not ready yet."],
};

// docs/protocols.md §3.8: [status, message].
const GENERATE: Record<number, [string, string]> = {
  400: ["INVALID_ARGUMENT", "Request contains an invalid argument."],
  401: ["UNAUTHENTICATED", "Request had invalid authentication credentials. Expected an API key."],
  403: ["PERMISSION_DENIED", "The caller does not have permission"],
  404: ["NOT_FOUND", "models/{model} is not found for API version v1beta, or is not supported for generateContent."],
  409: ["ABORTED", "The operation was aborted."],
  429: ["RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details."],
  500: [
    "INTERNAL",
    "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
  ],
  503: ["UNAVAILABLE", "The model is overloaded. Please try again later."],
  504: ["DEADLINE_EXCEEDED", "Deadline expired before operation could complete."],
  529: ["UNAVAILABLE", "The model is overloaded. Please try again later."],
};

const RETRY_STATUSES = new Set([429, 503, 529]);

function fill(template: string, ctx: ErrorContext): string {
  return template.replace("{model}", ctx.model ?? "unknown");
}

function messagesBody(status: number, ctx: ErrorContext): unknown {
  const [type, message] = MESSAGES[status] ?? (status >= 500 ? MESSAGES[500]! : MESSAGES[400]!);
  return {
    type: "error",
    error: { type, message: ctx.message ?? fill(message, ctx) },
    request_id: ctx.requestId ?? "req_sim",
  };
}

function chatBody(status: number, ctx: ErrorContext): unknown {
  const [type, code, message] = CHAT[status] ?? (status >= 500 ? CHAT[500]! : CHAT[400]!);
  return {
    error: {
      message: ctx.message ?? fill(message, ctx),
      type,
      param: ctx.param === undefined ? null : ctx.param,
      code: ctx.code === undefined ? code : ctx.code,
    },
  };
}

function generateBody(status: number, ctx: ErrorContext): unknown {
  const [name, message] = GENERATE[status] ?? (status >= 500 ? GENERATE[500]! : GENERATE[400]!);
  const error: Record<string, unknown> = { code: status, message: ctx.message ?? fill(message, ctx), status: name };
  if (status === 429) {
    error.details = [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        violations: [{ quotaId: "GenerateRequestsPerMinutePerProjectPerModel" }],
      },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${ctx.retryAfter ?? 1}s` },
    ];
  }
  return { error };
}

/** The vendor's own error envelope for `status` (docs/protocols.md §1.8, §2.7, §3.8). */
export function vendorError(protocol: Protocol, status: number, ctx: ErrorContext = {}): ErrorReply {
  const headers: Record<string, string> = {};
  if (RETRY_STATUSES.has(status)) headers["retry-after"] = String(ctx.retryAfter ?? 1);
  let body: unknown;
  switch (protocol) {
    case "messages":
      body = messagesBody(status, ctx);
      break;
    case "chat":
    case "responses":
      // The Responses API answers in the chat envelope (docs/protocols.md §5.2).
      body = chatBody(status, ctx);
      break;
    case "generate":
      body = generateBody(status, ctx);
      break;
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
  return { status, body: JSON.stringify(body), headers };
}

/** generateContent's answer to a key it does not know: a 400, not a 401 (§3.8). */
export function generateInvalidKey(): ErrorReply {
  const message = "API key not valid. Please pass a valid API key.";
  const body = {
    error: {
      code: 400,
      message,
      status: "INVALID_ARGUMENT",
      details: [
        {
          "@type": "type.googleapis.com/google.rpc.ErrorInfo",
          reason: "API_KEY_INVALID",
          domain: "googleapis.com",
          metadata: { service: "generativelanguage.googleapis.com" },
        },
        { "@type": "type.googleapis.com/google.rpc.LocalizedMessage", locale: "en-US", message },
      ],
    },
  };
  return { status: 400, body: JSON.stringify(body), headers: {} };
}
