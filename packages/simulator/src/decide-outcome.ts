import { firstWords } from "./build-reply-text";
import { countPromptTokens } from "./count-prompt-tokens";
import { isObject } from "./json-access";
import { parseDirectives } from "./parse-directives";
import { continuePlan, readContinuation } from "./read-continuation";
import { planReply, type PlanDefaults, type ReplyPlan } from "./plan-reply";
import { readChatRequest } from "./read-chat-request";
import { readGenerateRequest } from "./read-generate-request";
import { readMessagesRequest } from "./read-messages-request";
import { readResponsesRequest } from "./read-responses-request";
import type { ResponsesRender } from "./render-responses";
import { CHAT_VARIANTS } from "./render-chat";
import { MESSAGES_VARIANTS } from "./render-messages";
import { isReplayName, REPLAYS, type ReplayName } from "./replay-fixture";
import { isProblem, type RequestProblem, type SimRequest } from "./sim-request";
import type { Protocol } from "./simulator-options";
import type { Route } from "./match-route";
import type { ReplyTemplate } from "./reply-template";
import type { ErrorContext } from "./vendor-errors";

/** Everything a reply depends on that comes from the request body; cached per (path, body). */
export type Outcome =
  | { kind: "error"; protocol: Protocol; status: number; ctx: ErrorContext; firstByteMs: number }
  | ReplyOutcome
  | { kind: "replay"; name: ReplayName; stream: boolean; sse: boolean; latencyMs: number; firstByteMs: number }
  | { kind: "count"; body: string };

export interface ReplyOutcome {
  kind: "reply";
  protocol: Protocol;
  plan: ReplyPlan;
  stream: boolean;
  sse: boolean;
  includeUsage: boolean;
  /** The chat family's tier that served (its reply names it; default: `default`). */
  serviceTier?: string;
  /** What a Responses reply depends on beyond the plan. */
  responses?: ResponsesRender;
  latencyMs: number;
  firstByteMs: number;
  /** The rendered reply with slots for the per-request values, made on first use. */
  template?: ReplyTemplate;
}

export interface OutcomeDefaults extends PlanDefaults {
  latencyMs: number;
  firstByteMs: number;
}

const VARIANTS: Record<Protocol, readonly string[]> = {
  messages: MESSAGES_VARIANTS,
  chat: CHAT_VARIANTS,
  generate: [],
  responses: [],
};

// Each vendor's answer to a body that is not a JSON object.
const UNPARSABLE: Record<Protocol, string> = {
  messages: "There was an error parsing the body of your request: the body must be a JSON object",
  chat: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
  generate: "Invalid JSON payload received. Unexpected token.",
  responses:
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
};

function badRequest(protocol: Protocol, p: RequestProblem, model?: string): Outcome {
  const ctx: ErrorContext = { message: p.problem, param: p.param ?? null, code: p.code ?? null };
  if (model !== undefined) ctx.model = model;
  return { kind: "error", protocol, status: 400, ctx, firstByteMs: 0 };
}

function readRequest(
  route: Route & { kind: "reply" | "count" },
  body: Record<string, unknown>,
): SimRequest | RequestProblem {
  switch (route.protocol) {
    case "messages":
      return readMessagesRequest(body, route.kind === "count");
    case "chat":
      return readChatRequest(body);
    case "responses":
      return readResponsesRequest(body);
    case "generate": {
      // countTokens may wrap a whole request: {generateContentRequest: {model, contents, ...}}.
      const inner =
        route.kind === "count" && isObject(body.generateContentRequest) ? body.generateContentRequest : body;
      return readGenerateRequest(inner, route.model ?? "", route.kind === "reply" && route.stream === true);
    }
    default: {
      const never: never = route.protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

/** Each count endpoint's reply. */
function countBody(protocol: Protocol, inputTokens: number): Record<string, unknown> {
  if (protocol === "generate") return { totalTokens: inputTokens };
  if (protocol === "responses") return { object: "response.input_tokens", input_tokens: inputTokens };
  return { input_tokens: inputTokens };
}

/**
 * Decides the reply to one body: a vendor error, a planned reply, a replay, or a token count.
 * `inputTokens`: the body's count, when the caller has made it already (a large body's, in slices).
 */
export function decideOutcome(
  route: Route & { kind: "reply" | "count" },
  sent: unknown,
  defaults: OutcomeDefaults,
  inputTokens?: number,
  continuing = true,
): Outcome {
  const protocol = route.protocol;
  if (!isObject(sent)) return badRequest(protocol, { problem: UNPARSABLE[protocol] });
  // The body as sent is held to the vendor's rules first, a continuation's included.
  const whole = readRequest(route, sent);
  if (isProblem(whole)) return badRequest(protocol, whole, route.model);
  let body = sent;
  // A gateway continuing a cut reply: the reply to the turns before the partial, less what it said.
  const cont = continuing && route.kind === "reply" ? readContinuation(protocol, body) : undefined;
  if (cont) {
    inputTokens ??= countPromptTokens(protocol, body);
    body = cont.body;
  }
  const req = cont ? readRequest(route, body) : whole;
  if (isProblem(req)) return badRequest(protocol, req, route.model);
  inputTokens ??= countPromptTokens(protocol, body);
  const { directives: d, rest, problem } = parseDirectives(req.turnText);
  const fail = (message: string) => badRequest(protocol, { problem: `simulator: ${message}` }, req.model);
  if (problem) return fail(problem);
  const latencyMs = d.latencyMs ?? defaults.latencyMs;
  const firstByteMs = d.firstByteMs ?? defaults.firstByteMs;
  if (d.error !== undefined) {
    const ctx: ErrorContext = { model: req.model };
    if (d.retryAfter !== undefined) ctx.retryAfter = d.retryAfter;
    return { kind: "error", protocol, status: d.error, ctx, firstByteMs };
  }
  // Count endpoints honour only the error directive.
  if (route.kind === "count") {
    return { kind: "count", body: JSON.stringify(countBody(protocol, inputTokens)) };
  }
  if (d.variant !== undefined && !VARIANTS[protocol].includes(d.variant)) {
    const known = VARIANTS[protocol].join(", ") || "none";
    return fail(`unknown variant ${JSON.stringify(d.variant)} for the ${protocol} protocol (known: ${known})`);
  }
  const sse = route.sse !== false;
  if (d.replay !== undefined) {
    if (!isReplayName(d.replay))
      return fail(`unknown replay ${JSON.stringify(d.replay)} (known: ${Object.keys(REPLAYS).join(", ")})`);
    return { kind: "replay", name: d.replay, stream: req.stream, sse, latencyMs, firstByteMs };
  }
  const quote = firstWords(rest, 8);
  const planned = planReply(req, inputTokens, d, quote, defaults, rest);
  // A trailing assistant turn that is not the start of the reply the turns before it get is a
  // prefill of the client's own (or a history), not a cut reply: answered as any request is.
  if (cont && !planned.text.join("").startsWith(cont.partial.trimEnd()))
    return decideOutcome(route, sent, defaults, undefined, false);
  const plan = cont ? continuePlan(planned, cont, d.chunks ?? defaults.chunks) : planned;
  return {
    kind: "reply",
    protocol,
    plan,
    stream: req.stream,
    sse,
    includeUsage: req.includeUsage,
    ...(req.serviceTier ? { serviceTier: req.serviceTier } : {}),
    ...(req.responses ? { responses: req.responses } : {}),
    latencyMs,
    firstByteMs,
  };
}
