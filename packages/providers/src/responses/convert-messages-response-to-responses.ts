/**
 * The pivot reply (messages format) as a Responses response object: thinking → a `reasoning`
 * item with its text as the summary, text blocks → one `message` item of `output_text` parts,
 * each tool call → a `function_call` item; the stop reason → the status; usage in the format's
 * own fields (docs/protocols.md §5).
 */
import type {
  MessagesResponse,
  ResponsesOutputItem,
  ResponsesRequest,
  ResponsesResponse,
  ResponsesStatus,
  ResponsesUsage,
  StopReason,
} from "@turnpike/schema";
import { randomId } from "../ids.js";
import { messagesUsageFields, type UsageTotals } from "../usage.js";

/** What the response echoes of its request, and its identity. */
export interface ResponsesReplyContext {
  /** The model id the client asked for. */
  model: string;
  request: ResponsesRequest;
  /** `resp_…`; default: a fresh id. */
  id?: string;
  /** Unix seconds; default: now. */
  createdAt?: number;
  /** Names namespaced functions were offered under upstream → their namespace and own name. */
  namespaced?: Record<string, { namespace: string; name: string }>;
  /** Custom (free-form) tools offered upstream as function tools: their calls are `custom_tool_call` items. */
  custom?: Record<string, true>;
  /** Unix seconds at which the reply completed; default: now. */
  completedAt?: number;
  /** The service tier the upstream served the call at; default: `default`. */
  serviceTier?: string;
}

/** A custom tool's free-form input from the arguments of the function it was offered as (its one string argument). */
export function customToolInput(args: unknown): string {
  if (typeof args === "object" && args !== null && !Array.isArray(args)) {
    const values = Object.values(args);
    const own = (args as Record<string, unknown>).input; // an object: checked above
    if (typeof own === "string") return own;
    // A model that named the argument otherwise: its one string value is still the input.
    if (values.length === 1 && typeof values[0] === "string") return values[0];
  }
  return typeof args === "string" ? args : JSON.stringify(args ?? {});
}

/** A function call's name as the client named it (its own name, and its namespace if it has one). */
export function clientFunctionName(
  name: string,
  ctx: Pick<ResponsesReplyContext, "namespaced">,
): { name: string; namespace?: string } {
  const n = ctx.namespaced?.[name];
  return n ? { name: n.name, namespace: n.namespace } : { name };
}

/** A stop reason as the response's status (and why it is incomplete). */
export function responsesStatusOf(stop: StopReason | null | undefined): {
  status: ResponsesStatus;
  incomplete: ResponsesResponse["incomplete_details"];
} {
  switch (stop) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return { status: "incomplete", incomplete: { reason: "max_output_tokens" } };
    case "refusal":
      return { status: "incomplete", incomplete: { reason: "content_filter" } };
    case "end_turn":
    case "stop_sequence":
    case "tool_use":
    case "pause_turn":
    case null:
    case undefined:
      return { status: "completed", incomplete: null };
    default: {
      const never: never = stop;
      return { status: "completed", incomplete: never };
    }
  }
}

/** Usage (the pivot's fields, as read by `messagesUsageFields`) in the Responses format's fields: input includes the cached part. */
export function usageToResponses(u: Partial<UsageTotals>): ResponsesUsage {
  const cacheRead = u.cache_read_input_tokens ?? 0;
  const input = (u.input_tokens ?? 0) + cacheRead + (u.cache_creation_input_tokens ?? 0);
  const output = u.output_tokens ?? 0;
  const reasoning = u.reasoning_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cacheRead },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: input + output,
  };
}

/** The response object around a list of output items (also the body of a stream's lifecycle events). */
export function responsesEnvelope(
  ctx: ResponsesReplyContext & { id: string; createdAt: number },
  status: ResponsesStatus,
  output: ResponsesOutputItem[],
  usage: ResponsesUsage | null,
  incomplete: ResponsesResponse["incomplete_details"] = null,
  error: ResponsesResponse["error"] = null,
): ResponsesResponse {
  const r = ctx.request;
  return {
    id: ctx.id,
    object: "response",
    created_at: ctx.createdAt,
    completed_at: status === "completed" ? (ctx.completedAt ?? Math.floor(Date.now() / 1000)) : null,
    status,
    error,
    incomplete_details: incomplete,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    model: ctx.model,
    previous_response_id: r.previous_response_id ?? null,
    output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    // The settings the request gave, else the defaults the specification names (its example response).
    temperature: r.temperature ?? 1,
    top_p: r.top_p ?? 1,
    presence_penalty: r.presence_penalty ?? 0,
    frequency_penalty: r.frequency_penalty ?? 0,
    top_logprobs: r.top_logprobs ?? 0,
    tool_choice: r.tool_choice ?? "auto",
    tools: r.tools ?? [],
    max_tool_calls: r.max_tool_calls ?? null,
    truncation: r.truncation ?? "disabled",
    text: { format: textFormatOf(r.text?.format) },
    reasoning: { effort: r.reasoning?.effort ?? null, summary: r.reasoning?.summary ?? null },
    store: r.store ?? true,
    // A translated call runs while the client waits: never in the background, whatever was asked (a warning says so).
    background: false,
    service_tier: ctx.serviceTier ?? "default",
    metadata: r.metadata ?? {},
    user: r.user ?? null,
    safety_identifier: r.safety_identifier ?? null,
    prompt_cache_key: r.prompt_cache_key ?? null,
    usage,
  };
}

/** The request's text format as the response repeats it: a JSON schema format with all its fields. */
function textFormatOf(f: NonNullable<ResponsesRequest["text"]>["format"]): unknown {
  if (!f) return { type: "text" };
  if (f.type !== "json_schema") return f;
  return { ...f, description: f.description ?? null, strict: f.strict ?? false };
}

/** The pivot reply's content as output items, in order. */
export function outputItemsOf(
  res: MessagesResponse,
  ctx: Pick<ResponsesReplyContext, "namespaced" | "custom"> = {},
): ResponsesOutputItem[] {
  const items: ResponsesOutputItem[] = [];
  let message: Extract<ResponsesOutputItem, { type: "message" }> | undefined;
  for (const block of res.content) {
    switch (block.type) {
      case "text":
        if (!message) {
          message = { type: "message", id: randomId("msg_"), status: "completed", role: "assistant", content: [] };
          items.push(message);
        }
        message.content.push({ type: "output_text", text: block.text, annotations: [], logprobs: [] });
        break;
      case "thinking":
        message = undefined;
        items.push({
          type: "reasoning",
          id: randomId("rs_"),
          summary: block.thinking ? [{ type: "summary_text", text: block.thinking }] : [],
        });
        break;
      case "redacted_thinking":
        break;
      case "tool_use":
        message = undefined;
        if (ctx.custom?.[block.name]) {
          items.push({
            type: "custom_tool_call",
            id: randomId("ctc_"),
            call_id: block.id,
            name: block.name,
            input: customToolInput(block.input),
            status: "completed",
          });
          break;
        }
        items.push({
          type: "function_call",
          id: randomId("fc_"),
          call_id: block.id,
          ...clientFunctionName(block.name, ctx),
          arguments: JSON.stringify(block.input ?? {}),
          status: "completed",
        });
        break;
      default:
        // Server-tool blocks of a messages upstream have no Responses item of their own here.
        break;
    }
  }
  return items;
}

/**
 * @example
 * ```ts
 * convertMessagesResponseToResponses(pivotReply, { model: "beta-5", request: { model: "beta-5", input: "Hi" } });
 * // → { id: "resp_…", object: "response", status: "completed", output: [{ type: "message", … }], usage: {…} }
 * ```
 */
export function convertMessagesResponseToResponses(
  res: MessagesResponse,
  ctx: ResponsesReplyContext,
): ResponsesResponse {
  const { status, incomplete } = responsesStatusOf(res.stop_reason);
  const full = { ...ctx, id: ctx.id ?? randomId("resp_"), createdAt: ctx.createdAt ?? Math.floor(Date.now() / 1000) };
  return responsesEnvelope(
    full,
    status,
    outputItemsOf(res, ctx),
    usageToResponses(messagesUsageFields(res.usage)),
    incomplete,
  );
}
