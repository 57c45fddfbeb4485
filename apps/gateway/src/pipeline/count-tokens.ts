import { validateCountTokensRequest, type MessagesRequest, type Protocol } from "@turnpike/schema";
import type { GatewayDeps } from "../wiring/deps";
import { FORMATS, type ClientFormat } from "../formats";
import { PROTOCOLS, type UpstreamProtocol } from "../protocols";
import { admit, type Admitted } from "../limits/admit";
import { authenticate } from "../access/authenticate";
import type { Connection } from "../http/client-address";
import { newContext } from "../request/context";
import { emit } from "../request/events";
import { HEADER } from "../http/headers";
import { fromPivotInClientTerms, passthroughBody } from "../dispatch/plan";
import { readJsonBody } from "../request/read-body";
import { validationError } from "../vocabulary/client-errors";
import { resolve } from "../dispatch/resolve";
import { errorResponse, toGatewayError } from "../request/respond";

/** A count request, read by its format: the model, the body as sent, and the prompt in the pivot. */
export interface CountRequest {
  model: string;
  body: Readonly<Record<string, unknown>>;
  toPivot(target: Protocol): MessagesRequest;
}

/** How one format's count route reads its body and writes its answer. */
export interface CountRoute {
  format: ClientFormat;
  read(body: Record<string, unknown>): CountRequest;
  reply(inputTokens: number): unknown;
}

/** `POST /v1/messages/count_tokens`: the messages format's count request, `{input_tokens}`. */
export const MESSAGES_COUNT: CountRoute = {
  format: FORMATS.messages,
  read(body) {
    const checked = validateCountTokensRequest(body);
    if (!checked.ok) throw validationError(checked.issues);
    // The pivot needs an output cap; counting ignores it.
    const pivot: MessagesRequest = { ...checked.value, max_tokens: 1 };
    return { model: checked.value.model, body: checked.value, toPivot: () => pivot };
  },
  reply: (inputTokens) => ({ input_tokens: inputTokens }),
};

/** `POST /v1/responses/input_tokens`: a Responses request, `{object: "response.input_tokens", input_tokens}`. */
export const RESPONSES_COUNT: CountRoute = {
  format: FORMATS.responses,
  read(body) {
    const client = FORMATS.responses.validate(body);
    return { model: client.model, body: client.body, toPivot: (target) => client.toPivot(target).request };
  },
  reply: (inputTokens) => ({ object: "response.input_tokens", input_tokens: inputTokens }),
};

/** The vendor's count call made: its status and text (a refused connection throws). */
async function askUpstream(
  deps: GatewayDeps,
  call: { url: string; headers: Record<string, string>; body: string },
): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await deps.fetch(call.url, { method: "POST", headers: call.headers, body: call.body });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** The count in a vendor's reply, or why there is none (an error status, a reply without a count). */
function readUpstreamCount(
  protocol: UpstreamProtocol,
  res: { status: number; text: string; headers: Headers },
): number | { failed: string } {
  if (res.status < 200 || res.status >= 300)
    return { failed: `${res.status}: ${protocol.parseError(res.status, res.text, res.headers).message}` };
  try {
    const n = protocol.readCount(JSON.parse(res.text));
    return n === undefined ? { failed: "the reply held no count" } : n;
  } catch {
    return { failed: "the reply was not JSON" };
  }
}

/**
 * A count route for every catalog model, through the same authenticate → validate → resolve →
 * admit steps as inference: the upstream's own count where its protocol has a count call, else
 * Turnpike's local tokenizer. A count generates nothing, so it takes a request from the key's
 * rpm and gives its token estimate back.
 */
export async function handleCountTokens(
  deps: GatewayDeps,
  request: Request,
  server: Connection | null | undefined,
  route: CountRoute = MESSAGES_COUNT,
): Promise<Response> {
  const format = route.format;
  const ctx = newContext(request, format, server, deps.config.trustedProxies);
  emit(deps.hooks, "onStart", ctx);
  let admitted: Admitted | undefined;
  let model: string | undefined;
  try {
    const key = await authenticate(deps, ctx);
    emit(deps.hooks, "onAuthenticated", ctx, key.id);
    const { value, size } = await readJsonBody(request, deps.config.maxBodyBytes, deps.config.maxBodyValues);
    const counted = route.read(value);
    model = counted.model;
    const target = resolve(deps, key, counted.model);
    admitted = await admit(deps, ctx, key, target.entry, size);
    const protocol = PROTOCOLS[target.entry.protocol];
    const headers = new Headers(format.idHeaders(ctx.id));
    headers.set(HEADER.upstream, target.upstream.simulated ? "simulator" : target.upstream.vendor);
    for (const [k, v] of Object.entries(admitted.limitHeaders)) headers.set(k, v);
    let inputTokens: number;
    if (!protocol.count) {
      inputTokens = deps.countPrompt(counted.toPivot(protocol.id));
      headers.set(HEADER.count, "local");
    } else {
      // The body the same request would be sent with, counted by the upstream.
      const body =
        format.passthroughProtocol === protocol.id
          ? passthroughBody(counted.body, target.entry.upstream_model)
          : (await fromPivotInClientTerms(protocol, counted.toPivot(protocol.id), target, deps)).body;
      const call = await protocol.count(target, body, request.headers);
      const upstream = await askUpstream(deps, call).catch((e: unknown) => ({
        failed: e instanceof Error ? e.message : String(e),
      }));
      const read = "text" in upstream ? readUpstreamCount(protocol, upstream) : upstream;
      if (typeof read === "number") {
        inputTokens = read;
        headers.set(HEADER.count, "upstream");
      } else {
        // An agent's context bar must not fail because a count did: Turnpike's own count instead,
        // said so in the header, and the vendor's failure in the log.
        deps.logger.warn("vendor count failed; answered with the local count", {
          request_id: ctx.id,
          model: target.entry.id,
          vendor: target.upstream.vendor,
          reason: read.failed,
        });
        inputTokens = deps.countPrompt(counted.toPivot(protocol.id));
        headers.set(HEADER.count, "local");
      }
    }
    admitted.settle(0);
    emit(deps.hooks, "onFinish", ctx, 200, undefined);
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify(route.reply(inputTokens)), { status: 200, headers });
  } catch (e) {
    admitted?.settle(0);
    const err = toGatewayError(e, deps.logger, ctx.id);
    emit(deps.hooks, "onRefused", ctx, err);
    emit(deps.hooks, "onFinish", ctx, format.renderError(err, ctx.id).status, undefined);
    return errorResponse(format, err, { logger: deps.logger, request, requestId: ctx.id, model });
  }
}
