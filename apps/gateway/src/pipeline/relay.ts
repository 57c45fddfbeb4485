import { headerSafe, messagesUsageFields } from "@turnpike/providers";
import type { GatewayDeps } from "../deps";
import type { RequestContext } from "./context";
import { HEADER, SSE_HEADERS } from "./headers";
import type { Ending } from "./meter";
import { passthroughTap } from "./passthrough-tap";
import type { Plan } from "./plan";
import { relayStream } from "./relay-stream";
import { translatedTap } from "./translated-tap";
import type { UsageTally } from "./usage-tally";

/** The headers every inference reply carries, errors included. */
export function replyHeaders(ctx: RequestContext, plan: Plan, limitHeaders: Record<string, string>): Headers {
  const h = new Headers(ctx.format.idHeaders(ctx.id));
  h.set(HEADER.upstream, plan.target.upstream.simulated ? "simulator" : plan.target.upstream.vendor);
  // Header values must be plain ASCII; a warning must never turn a good reply into a 500.
  for (const w of plan.warnings) h.append(HEADER.warning, headerSafe(`${w.param}: ${w.message}`));
  for (const [k, v] of Object.entries(limitHeaders)) h.set(k, v);
  return h;
}

/**
 * Step 7: the upstream's reply to the client. JSON: read whole, usage tallied, encoded in the
 * client's format (a passthrough relays the bytes unless the model id must be put back); the
 * record is committed before the client sees it. Stream: relayed chunk by chunk through an inline
 * tap (the light passthrough reader, or the whole translation), metered when it ends.
 */
export async function relay(
  deps: GatewayDeps,
  ctx: RequestContext,
  plan: Plan,
  upstream: Response,
  headers: Headers,
  tally: UsageTally,
  finish: (end: Ending) => Promise<void>,
): Promise<Response> {
  const { entry } = plan.target;
  if (!plan.stream) {
    const text = await upstream.text();
    let out: string;
    if (plan.passthrough) {
      const parsed = JSON.parse(text) as Record<string, unknown>; // the vendor's JSON reply, read leniently (docs/style.md rule 1)
      tally.report(plan.protocol.replyUsage(parsed), true);
      if (entry.upstream_model !== entry.id) {
        parsed.model = entry.id;
        out = JSON.stringify(parsed);
      } else {
        out = text; // relay the bytes as they came
      }
    } else {
      const reply = plan.protocol.reply(JSON.parse(text), plan.reply);
      tally.report(messagesUsageFields(reply.usage), true);
      out = JSON.stringify(plan.client.encodeReply(reply, entry.id));
    }
    // The record is committed before the client sees the reply.
    await finish({ status: 200, upstreamStatus: upstream.status });
    headers.set("content-type", "application/json");
    return new Response(out, { status: 200, headers });
  }
  const tap = plan.passthrough
    ? passthroughTap(plan.protocol.passthrough, ctx.format, tally, { includeUsage: plan.includeUsage, renameModel: entry.upstream_model !== entry.id ? entry.id : undefined })
    : translatedTap(plan.protocol, plan.client, plan.reply, tally);
  const body = relayStream(upstream.body ?? new ReadableStream(), {
    format: ctx.format,
    tap,
    logger: deps.logger,
    requestId: ctx.id,
    keepAliveMs: deps.config.keepAliveSeconds * 1000,
    onEnd: (how) => finish({ status: 200, upstreamStatus: upstream.status, aborted: how === "aborted" }),
  });
  for (const [k, v] of Object.entries(SSE_HEADERS)) headers.set(k, v);
  // A stream may be quiet for long stretches (thinking); Bun counts only reads as activity, so
  // its idle timeout would cut it whatever we write: lift it for this request alone
  // (decisions/0002-quiet-streams-and-idle-timeouts.md).
  ctx.server?.timeout(ctx.request, 0);
  return new Response(body, { status: 200, headers });
}
