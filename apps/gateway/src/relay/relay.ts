import { blockedError, restoreMessage } from "../guardrails/pivot";
import { GuardrailBlock } from "../guardrails/run";
import { GatewayError, headerSafe, messagesUsageFields } from "@turnpike/providers";
import type { MessagesResponse } from "@turnpike/schema";
import { clientGone, type RequestContext } from "../request/context";
import { firstFrameGuard } from "./first-frame-guard";
import { sseLineGate } from "./sse-line-gate";
import { HEADER, SSE_HEADERS } from "../http/headers";
import { fanout } from "../request/events";
import { errorResponse } from "../request/respond";
import { usageLooksTrue, usageTextLooksTrue } from "./usage-audit";
import { LINK_AFTER_MS, timeoutError, type Watch } from "../dispatch/execute";
import type { Ending } from "../metering/meter";
import { lastFinishReason, passthroughTap } from "./passthrough-tap";
import type { Plan } from "../dispatch/plan";
import type { Deployment } from "../dispatch/deployments";
import { relayStream } from "./relay-stream";
import { type TranslatedTap, translatedTap } from "./translated-tap";
import { ContinuingStream, continuesPassthrough } from "./continuing-tap";
import type { StreamContinuer } from "../dispatch/continuation";
import { StreamSpan } from "./stream-span";
import type { InlineTap } from "./passthrough-tap";
import type { UsageTally } from "../metering/usage-tally";
import { isRecord } from "../vocabulary/client-errors";
import type { PipelineHooks } from "../request/events";
import type { Logger } from "../log/logger";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface RelayDeps {
  config: { keepAliveSeconds: number };
  hooks: readonly PipelineHooks[];
  logger: Logger;
  /** Tokens in a piece of text (a cut attempt's output, counted from what was relayed). */
  countText: (text: string) => number;
  /** Aborted when a drain's grace period is over: the streams still open end with the in-band error. */
  shutdown?: AbortSignal;
}

/**
 * A reply's headers. Built from a per-deployment template: in Bun 1.4.4 every header handed to
 * `Response` as a JavaScript value costs about 0.4 µs to convert, and a copy of a native
 * `Headers` much less, so the half that is the same on every reply of a deployment is converted
 * once (bench/README.md, "What was tried").
 */
export type ReplyHeaders = Headers;

/** Per deployment, the reply headers that do not change between its replies: one set for JSON, one for streams. */
const templates = new WeakMap<Deployment, { json: Headers; stream: Headers }>();

function templateOf(d: Deployment, stream: boolean): Headers {
  let t = templates.get(d);
  if (!t) {
    const { entry, upstream } = d.target;
    const same: Record<string, string> = {
      [HEADER.model]: headerSafe(entry.id),
      [HEADER.deployment]: headerSafe(d.name),
      [HEADER.attempts]: "1",
      [HEADER.upstream]: upstream.simulated ? "simulator" : upstream.vendor,
      // The model asked of the vendor; a JSON reply replaces it with the vendor's own name for it.
      [HEADER.upstreamModel]: headerSafe(entry.upstream_model),
    };
    t = {
      json: new Headers({ ...same, "content-type": "application/json" }),
      stream: new Headers({ ...same, ...SSE_HEADERS }),
    };
    templates.set(d, t);
  }
  return stream ? t.stream : t.json;
}

/** The headers every inference reply carries (an error reply keeps them, in JSON). */
export function replyHeaders(
  ctx: RequestContext,
  plan: Plan,
  limitHeaders: Record<string, string>,
  sent: { deployment: Deployment; attempts: number; requested: string },
): ReplyHeaders {
  const h = new Headers(templateOf(sent.deployment, plan.stream));
  const ids = ctx.format.idHeaders(ctx.id);
  for (const k in ids) h.set(k, ids[k]!);
  if (sent.attempts !== 1) h.set(HEADER.attempts, String(sent.attempts));
  if (sent.requested !== plan.target.entry.id) h.set(HEADER.fallbackFrom, headerSafe(sent.requested));
  if (plan.serviceTier) h.set(HEADER.serviceTier, plan.serviceTier);
  // Header values must be plain ASCII; a warning must never turn a good reply into a 500. Several
  // warnings share the header, comma-separated, as a repeated header reads through `fetch`.
  if (plan.warnings.length)
    h.set(HEADER.warning, plan.warnings.map((w) => headerSafe(`${w.param}: ${w.message}`)).join(", "));
  for (const k in limitHeaders) h.set(k, limitHeaders[k]!);
  return h;
}

/** The text a pivot reply carries (counted only if the upstream's own usage cannot be used). */
function replyText(reply: MessagesResponse): string {
  let text = "";
  for (const b of reply.content ?? []) {
    if (b.type === "text") text += b.text;
    else if (b.type === "thinking") text += b.thinking;
    else if (b.type === "tool_use") text += JSON.stringify(b.input);
  }
  return text;
}

/** What a 200 body that is not a reply looks like, in words (never its bytes). */
function describe(text: string): string {
  if (text.trim() === "") return "an empty body";
  if (/^\s*</.test(text)) return "an HTML or XML page";
  return "a body that is not the JSON of a reply";
}

/**
 * A vendor's 200 that is no reply (an empty body, HTML, truncated JSON, a stream where JSON was
 * due): a 502 naming the vendor, in the caller's format. Nothing of the vendor's bytes is relayed.
 */
function malformed(vendor: string, what: string): GatewayError {
  return new GatewayError({
    status: 502,
    type: "api_error",
    message: `The ${vendor} upstream answered 200 with ${what}; nothing of it was relayed.`,
  });
}

/**
 * Step 7: the upstream's reply to the client. JSON: read whole, usage tallied, encoded in the
 * client's format (a passthrough relays the bytes unless the model id must be put back); the
 * record is committed before the client sees it; a 200 that is not a reply is a 502. Stream:
 * relayed chunk by chunk through an inline tap (the light passthrough reader, or the whole
 * translation) behind a check of its first event, metered when it ends.
 */
export async function relay(
  deps: RelayDeps,
  ctx: RequestContext,
  plan: Plan,
  upstream: Response,
  headers: ReplyHeaders,
  tally: UsageTally,
  finish: (end: Ending) => Promise<void>,
  watch?: Watch,
  continuing?: Continuing,
): Promise<Response> {
  const { entry } = plan.target;
  const vendor = plan.target.upstream.vendor;
  // Usage as the vendor wrote it is checked before any reader rounds it (a negative count reads as 0).
  const maxTokens = entry.context_window + entry.max_output_tokens;
  const type = upstream.headers.get("content-type") ?? "";
  const r: Relaying = { deps, ctx, plan, upstream, headers, tally, finish, watch, vendor, maxTokens, type, continuing };
  if (!plan.stream || (type !== "" && !type.includes("event-stream"))) return relayJson(r);
  return relayEvents(r);
}

/** An upstream failure before any output: recorded with the status the client sees, billed nothing. */
async function refuse(r: Relaying, err: GatewayError): Promise<Response> {
  const { deps, ctx, plan } = r;
  deps.logger.warn("malformed upstream reply", { request_id: ctx.id, vendor: r.vendor, reason: err.message });
  await r.finish({
    status: ctx.format.renderError(err, ctx.id).status,
    upstreamStatus: r.upstream.status,
    unbilled: true,
  });
  return errorResponse(
    ctx.format,
    err,
    { logger: deps.logger, request: ctx.request, requestId: ctx.id, model: plan.client.model },
    r.headers,
  );
}

/** One reply on its way to the client: what both halves of relay read. */
interface Relaying {
  deps: RelayDeps;
  ctx: RequestContext;
  plan: Plan;
  upstream: Response;
  headers: ReplyHeaders;
  tally: UsageTally;
  finish: (end: Ending) => Promise<void>;
  watch: Watch | undefined;
  vendor: string;
  /** No reply can use more tokens than its model's window and output cap. */
  maxTokens: number;
  /** The upstream's content type. */
  type: string;
  /** Continues the stream if it is cut (only where the route allows it). */
  continuing: Continuing | undefined;
}

/** A stream's continuation, where its route allows one (dispatch/continuation.ts). */
export interface Continuing {
  continuer: StreamContinuer;
  /** The ledger's count of continuations. */
  route: { continuations?: number };
}

/**
 * A JSON reply (or what came where one was due): read whole within the first-byte deadline,
 * usage tallied, encoded in the client's format, committed before the client sees it.
 */
async function relayJson(r: Relaying): Promise<Response> {
  const { deps, ctx, plan, upstream, headers, tally, finish, watch, vendor, maxTokens, type } = r;
  const { entry } = plan.target;
  let text: string;
  // A JSON body must arrive whole within the first-byte deadline. One timer, in two stages: a body
  // still coming after LINK_AFTER_MS is read following the client (a client that leaves lets the
  // upstream go at once, as before the head), then the deadline; a body read sooner costs no listener.
  let late = false;
  let deadline: ReturnType<typeof setTimeout> | undefined;
  if (watch) {
    const follow = Math.min(LINK_AFTER_MS, watch.firstByteMs);
    deadline = setTimeout(() => {
      watch.followClient();
      deadline = setTimeout(() => {
        late = true;
        watch.abort("no body");
      }, watch.firstByteMs - follow);
    }, follow);
  }
  try {
    text = await upstream.text();
  } catch {
    clearTimeout(deadline);
    // The client left while the body was coming: recorded as gone, like a client that left before the head.
    if (clientGone(ctx) && !late) {
      await finish({ status: 499, upstreamStatus: upstream.status, aborted: true });
      return new Response(null, { status: 499 });
    }
    return refuse(
      r,
      late ? timeoutError(vendor, "send its reply", watch!.firstByteMs) : malformed(vendor, "a body that broke off"),
    );
  } finally {
    clearTimeout(deadline);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return refuse(
      r,
      malformed(vendor, plan.stream ? `a ${type.split(";")[0]} body where a stream was due` : describe(text)),
    );
  }
  if (!isRecord(parsed)) return refuse(r, malformed(vendor, describe("")));
  // Some vendors answer an error with a 200: it is their error, not a reply.
  if (isRecord(parsed.error)) {
    const said = plan.protocol.parseError(502, text, upstream.headers);
    return refuse(
      r,
      new GatewayError({
        status: 502,
        type: "api_error",
        message: `The ${vendor} upstream answered 200 with an error: ${said.message}`,
      }),
    );
  }
  if (plan.stream) return refuse(r, malformed(vendor, "a JSON reply where a stream was due"));
  if (!usageLooksTrue(parsed, maxTokens)) tally.distrust();
  const named = plan.protocol.replyModel(parsed);
  if (named) {
    if (named !== entry.upstream_model) headers.set(HEADER.upstreamModel, headerSafe(named));
    tally.answeredBy(named);
  }
  let out: string;
  // A value a blocking policy found in the reply (guardrails, `reply` surface): the client gets the 400.
  let blocked: GuardrailBlock | undefined;
  try {
    if (plan.passthrough) {
      tally.report(plan.protocol.replyUsage(parsed), true);
      tally.relayedLater(() => replyText(plan.protocol.reply(parsed, plan.reply)));
      tally.finished(() => lastFinishReason([text]));
      // The client sees the catalog id it asked for, not the vendor's snapshot name.
      const key = plan.protocol.passthrough.modelKey ?? "model";
      if (parsed[key] !== entry.id) {
        parsed[key] = entry.id;
        out = JSON.stringify(parsed);
      } else {
        out = text; // relay the bytes as they came
      }
      plan.client.passedThrough?.(parsed);
    } else {
      const reply = plan.protocol.reply(parsed, plan.reply);
      tally.report(messagesUsageFields(reply.usage), true);
      if (reply.stop_reason) tally.finished(reply.stop_reason);
      tally.relayedLater(() => replyText(reply));
      // The client's own values back in place of the placeholders the guardrails sent (docs/guardrails.md).
      out = JSON.stringify(plan.client.encodeReply(plan.guard ? restoreMessage(plan.guard, reply) : reply, entry.id));
    }
  } catch (e) {
    if (!(e instanceof GuardrailBlock)) return refuse(r, malformed(vendor, "JSON that is not a reply of its protocol"));
    blocked = e;
    out = "";
  }
  if (blocked) {
    // Billed: the upstream answered; the record says which policy and category, never the value.
    const err = blockedError(blocked);
    await finish({ status: ctx.format.renderError(err, ctx.id).status, upstreamStatus: upstream.status });
    return errorResponse(
      ctx.format,
      err,
      { logger: deps.logger, request: ctx.request, requestId: ctx.id, model: plan.client.model },
      headers,
    );
  }
  // The record is committed before the client sees the reply. A client whose connection is
  // already gone (Bun's server closes one that pipelines a request behind this one, see
  // docs/operations.md "HTTP/1.1 pipelining") is recorded as gone: billed, never told.
  if (ctx.request.signal.aborted) {
    await finish({ status: 499, upstreamStatus: upstream.status, aborted: true });
    return new Response(null, { status: 499 });
  }
  await finish({ status: 200, upstreamStatus: upstream.status });
  return new Response(out, { status: 200, headers });
}

/** A stream: relayed chunk by chunk through its inline tap, behind a check of its first event. */
function relayEvents({
  deps,
  ctx,
  plan,
  upstream,
  headers,
  tally,
  finish,
  watch,
  vendor,
  maxTokens,
  continuing,
}: Relaying): Response {
  const { entry } = plan.target;
  const audit = (json: string) => {
    if (!usageTextLooksTrue(json, maxTokens)) tally.distrust();
  };
  // The request's own in-band error where its format's says too little.
  const format = plan.client.inBandError ? { ...ctx.format, inBandError: plan.client.inBandError } : ctx.format;
  // A translated stream is re-encoded event by event; a passthrough one is relayed as it came,
  // so its lines are checked on the way.
  // A continued stream keeps the span of what the client received (relay/stream-span.ts); a
  // passthrough's is read back only after a cut. No continuation: none of it exists.
  const goOn = continuing && (!plan.passthrough || continuesPassthrough(plan.protocol)) ? continuing : undefined;
  let stream: ContinuingStream | undefined;
  const span = goOn && !plan.passthrough ? new StreamSpan() : undefined;
  const inner = plan.passthrough
    ? sseLineGate(
        passthroughTap(
          plan.protocol.passthrough,
          format,
          tally,
          { includeUsage: plan.includeUsage, renameModel: entry.id },
          audit,
        ),
        format,
        vendor,
      )
    : translatedTap(
        plan.protocol,
        plan.client,
        plan.reply,
        tally,
        audit,
        plan.guard,
        span && { span, onCut: (ev) => stream?.markCut(ev) },
      );
  let source = upstream.body ?? new ReadableStream<Uint8Array>();
  let tap: InlineTap = inner;
  if (goOn) {
    stream = new ContinuingStream(
      source,
      span
        ? { kind: "pivot", tap: inner as TranslatedTap, span }
        : { kind: "bytes", tap: inner, reply: plan.reply, protocol: plan.protocol },
      watch,
      {
        format,
        client: plan.client,
        model: entry.id,
        tally,
        countText: deps.countText,
        countPrompt: () => plan.countPrompt(),
        continuer: goOn.continuer,
        signal: ctx.request.signal,
        logger: deps.logger,
        requestId: ctx.id,
        route: goOn.route,
      },
    );
    source = stream.source;
    tap = stream.tap;
    watch = stream.watch;
  }
  const on = fanout(deps.hooks);
  const firstToken = on.onFirstToken;
  const body = relayStream(source, {
    format,
    tap: firstFrameGuard(tap, format, vendor),
    logger: deps.logger,
    requestId: ctx.id,
    keepAliveMs: deps.config.keepAliveSeconds * 1000,
    // No closure where nobody listens for the first token.
    onFirstPiece: firstToken && (() => firstToken(ctx, performance.now() - ctx.started)),
    watch,
    shutdown: deps.shutdown,
    client: ctx.request.signal,
    onEnd: (how) => {
      switch (how) {
        case "complete": {
          // A passthrough whose last frame carried the whole reply: the client may keep it.
          const whole = tap.reply?.();
          if (whole) plan.client.passedThrough?.({ ...whole, model: entry.id });
          return finish({ status: 200, upstreamStatus: upstream.status });
        }
        case "aborted":
          return finish({ status: 200, upstreamStatus: upstream.status, aborted: true });
        case "failed":
          // The client saw the stream end in an in-band error: recorded as the upstream's failure
          // (502), and billed nothing if no output had been produced (an error before output).
          return finish({
            status: 502,
            upstreamStatus: upstream.status,
            unbilled:
              tally.usage.output_tokens === 0 && tally.relayedText() === "" && tally.carriedUsage.output_tokens === 0,
          });
        default: {
          const never: never = how;
          return never;
        }
      }
    },
  });
  on.onStreamStart?.(ctx);
  // A stream may be quiet for long stretches (thinking); Bun counts only reads as activity, so
  // its idle timeout would cut it whatever we write: lift it for this request alone
  // (decisions/0002-quiet-streams-and-idle-timeouts.md).
  ctx.server?.timeout(ctx.request, 0);
  return new Response(body, { status: 200, headers });
}
