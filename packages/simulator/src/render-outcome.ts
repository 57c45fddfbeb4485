import type { Outcome, ReplyOutcome } from "./decide-outcome";
import { chatJson, chatStream } from "./render-chat";
import { generateJson, generateStream } from "./render-generate";
import { messagesJson, messagesStream } from "./render-messages";
import { NO_ECHO, responsesJson, responsesStream } from "./render-responses";
import { replayBody, replayErrorStatus, replayStream } from "./replay-fixture";
import { compileTemplate, fillTemplate, TEMPLATE_CONTEXT } from "./reply-template";
import { jsonResponse, streamResponse } from "./respond";
import type { Protocol } from "./simulator-options";
import type { RenderContext, StreamPlan } from "./stream-plan";
import { vendorError, type ErrorContext } from "./vendor-errors";

const SSE = "text/event-stream";

/** Each vendor's request-id header. */
export function vendorHeaders(protocol: Protocol, seq: number): Record<string, string> {
  if (protocol === "messages") return { "request-id": `req_sim${seq}` };
  if (protocol === "chat" || protocol === "responses") return { "x-request-id": `req_sim${seq}` };
  return {};
}

function replyStream(o: ReplyOutcome, ctx: RenderContext): StreamPlan {
  switch (o.protocol) {
    case "messages":
      return messagesStream(o.plan, ctx);
    case "chat":
      return chatStream(o.plan, ctx, o.includeUsage, o.serviceTier);
    case "generate":
      return generateStream(o.plan, ctx, o.sse);
    case "responses":
      return responsesStream(o.plan, ctx, o.responses ?? NO_ECHO);
    default: {
      const never: never = o.protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

function replyJson(o: ReplyOutcome, ctx: RenderContext): string {
  switch (o.protocol) {
    case "messages":
      return messagesJson(o.plan, ctx);
    case "chat":
      return chatJson(o.plan, ctx, o.serviceTier);
    case "generate":
      return generateJson(o.plan, ctx);
    case "responses":
      return responsesJson(o.plan, ctx, o.responses ?? NO_ECHO);
    default: {
      const never: never = o.protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

function renderReply(o: ReplyOutcome, seq: number, created: number): Response {
  const headers = vendorHeaders(o.protocol, seq);
  const type = o.stream && o.sse ? SSE : "application/json";
  // Paced or broken streams are rendered frame by frame; every other reply is written in one
  // piece, rendered once per outcome and stamped per request.
  if (o.stream && (o.latencyMs > 0 || o.plan.midstream === "reset")) {
    return streamResponse(replyStream(o, { seq, created }), o.latencyMs, type, headers);
  }
  o.template ??= compileTemplate(
    o.stream ? replyStream(o, TEMPLATE_CONTEXT).frames.join("") : replyJson(o, TEMPLATE_CONTEXT),
  );
  const text = fillTemplate(o.template, seq, created);
  return o.stream
    ? streamResponse({ frames: [text], reset: false }, 0, type, headers)
    : jsonResponse(200, text, headers);
}

/** The HTTP response of an outcome for request number `seq`. */
export async function renderOutcome(o: Outcome, seq: number): Promise<Response> {
  switch (o.kind) {
    case "count":
      return jsonResponse(200, o.body);
    case "error":
      return errorResponse(o.protocol, o.status, { requestId: `req_sim${seq}`, ...o.ctx }, seq);
    case "replay": {
      const status = replayErrorStatus(o.name);
      if (status !== undefined || !o.stream) return jsonResponse(status ?? 200, await replayBody(o.name));
      return streamResponse(await replayStream(o.name, o.sse), o.latencyMs, o.sse ? SSE : "application/json");
    }
    case "reply":
      return renderReply(o, seq, Math.floor(Date.now() / 1000));
    default: {
      const never: never = o;
      throw new Error(`unknown outcome ${String(never)}`);
    }
  }
}

/** A vendor error reply with the vendor's headers. */
export function errorResponse(protocol: Protocol, status: number, ctx: ErrorContext, seq: number): Response {
  const e = vendorError(protocol, status, ctx);
  return jsonResponse(e.status, e.body, { ...vendorHeaders(protocol, seq), ...e.headers });
}
