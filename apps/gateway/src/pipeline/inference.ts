import type { GatewayDeps } from "../wiring/deps";
import type { ClientFormat } from "../formats";
import { admitNow, type Admitted } from "../limits/admit";
import { dispatch } from "../dispatch/attempts";
import { streamContinuer } from "../dispatch/continuation";
import { withInputTokens } from "../dispatch/plan";
import { authenticateNow } from "../access/authenticate";
import type { Connection } from "../http/client-address";
import { askedOutputCap } from "../limits/worst-case";
import { newContext } from "../request/context";
import { fanout } from "../request/events";
import { meter, meterOnce, type Ending } from "../metering/meter";
import { GuardrailRun } from "../guardrails/run";
import { keyPolicies } from "../guardrails/policy";
import type { Target } from "../protocols";
import { recall } from "../stored-responses/recall";
import { remember } from "../stored-responses/remember";
import { relay, replyHeaders } from "../relay/relay";
import { resolve } from "../dispatch/resolve";
import { askedPriceFactor } from "../dispatch/service-tier";
import { errorResponse, toGatewayError } from "../request/respond";
import { UsageTally } from "../metering/usage-tally";
import { readText, validateText } from "./validate";
import type { KeyRecord } from "../storage/store";
import { LARGE_BODY_CHARS, loopTurn } from "../vocabulary/loop-turns";

/**
 * One inference call, top to bottom (docs/design.md, "One request"): authenticate → validate →
 * resolve → admit → dispatch (plan and execute each attempt, over deployments and fallbacks) →
 * relay → meter. Each step is a function of its own file; what one finds is handed to the next
 * as plain values. A request that reached an upstream is metered exactly once, however it ends.
 */
/** A call made inside the gateway (a batch line): its key already known, its price scaled. */
export interface InternalCall {
  key: KeyRecord;
  /** The share of the catalog price billed (a batch line at the model's batch discount). */
  costFactor: number;
  /**
   * Admitted when it was sent (a batch line an upstream's batch API ran, now replayed): not
   * admitted again; this admission's reservation is settled by the line's metering.
   */
  admitted?: Admitted;
  /**
   * The external hooks' answers kept with a batch line when it was prepared (GuardrailRun
   * `keptHookAnswers`): its run reads them instead of asking again, so a line asks a hook once.
   */
  hookAnswers?: Record<string, unknown>;
}

/** What a caller that keeps the reply itself is told of the request (the Responses WebSocket's memory). */
export interface TurnObserver {
  /** The request's guardrails, once made: what the caller keeps of the reply is kept in their redacted form. */
  guarded(run: GuardrailRun): void;
}

export async function handleInference(
  deps: GatewayDeps,
  request: Request,
  format: ClientFormat,
  server?: Connection | null,
  internal?: InternalCall,
  observer?: TurnObserver,
): Promise<Response> {
  // From here on the format travels in the context only.
  const ctx = newContext(request, format, server, deps.config.trustedProxies);
  // The hook set's fan-out, compiled once per set: an event nobody listens to is no call.
  const on = fanout(deps.hooks);
  on.onStart?.(ctx);
  let finish: ReturnType<typeof meterOnce> | undefined;
  let admitted: Admitted | undefined;
  let upstreamStatus = 0;
  let model: string | undefined;
  // A request its guardrails blocked leaves a record (the policy and category, never the value).
  let guarded: { guard: GuardrailRun; key: KeyRecord; target: Target; stream: boolean } | undefined;
  const refusal = () => ({ logger: deps.logger, request, requestId: ctx.id, model });
  try {
    const known = internal?.key ?? authenticateNow(deps, ctx);
    const key = known instanceof Promise ? await known : known;
    on.onAuthenticated?.(ctx, key.id);
    // The body's text, then its check: awaited only where there is a promise (a small body's check is at once).
    const checked = validateText(ctx, await readText(ctx, deps.config), deps.config, (m) => {
      model = m;
    });
    const { request: validated, size } = checked instanceof Promise ? await checked : checked;
    // A large body's next steps wait for a turn of the event loop (vocabulary/loop-turns.ts).
    if (size > LARGE_BODY_CHARS) await loopTurn();
    // Only a request that continues a stored reply has anything to recall (no async frame otherwise).
    const client = validated.continues ? await recall(deps, key, validated) : validated;
    const asked = resolve(deps, key, client.model);
    const letIn =
      internal?.admitted ??
      admitNow(deps, ctx, key, asked.entry, size, {
        requestId: ctx.id,
        stream: client.stream,
        outputCap: askedOutputCap(client.body),
        priceFactor: askedPriceFactor(ctx.format.id, client.body, asked.entry),
        // A continued reply's input holds the stored conversation too: its budget worst case counts it.
        ...(client === validated ? {} : { inputChars: JSON.stringify(client.body).length }),
      });
    admitted = letIn instanceof Promise ? await letIn : letIn;
    // Only a request some policy applies to carries guardrails (no cost otherwise; the key's policies are made once per key).
    const policies = keyPolicies(deps.config.guardrails, key);
    const guard = policies ? new GuardrailRun(policies, ctx.id) : undefined;
    if (guard) {
      if (internal?.hookAnswers) guard.adoptHookAnswers(internal.hookAnswers);
      guarded = { guard, key, target: asked, stream: client.stream };
      observer?.guarded(guard);
    }
    const sent = await dispatch(deps, ctx, client, asked, size, guard);
    const { plan: p, outcome } = sent;
    const target = p.target; // the model that served: its id, window and prices
    if (p.serviceTier) p.client.servedAt?.(p.serviceTier);
    // No request can use more than its model's window and output cap: usage beyond it is not believed.
    const tally = new UsageTally(target.entry.context_window + target.entry.max_output_tokens);
    const route = {
      deployment: sent.deployment.name,
      attempts: sent.attempts,
      requested: sent.requested,
      cacheResetFrom: sent.cacheResetFrom,
      continuations: 0,
    };
    finish = meterOnce(deps, {
      ctx,
      key,
      target,
      stream: p.stream,
      tally,
      admitted,
      countPrompt: () => p.countPrompt(),
      route,
      guard: p.guard,
      serviceTier: p.serviceTier,
      ...(internal ? { costFactor: internal.costFactor } : {}),
    });
    if (outcome.kind !== "gone") upstreamStatus = outcome.status;
    const headers = outcome.kind === "gone" ? undefined : replyHeaders(ctx, p, admitted.limitHeaders, sent);
    switch (outcome.kind) {
      case "gone":
        await finish({ status: 499, upstreamStatus: 0, aborted: true });
        return new Response(null, { status: 499 });
      case "error":
        // The record keeps the status the client saw (its format's: a 529 is a chat client's 503).
        await finish({
          status: ctx.format.renderError(outcome.error, ctx.id).status,
          upstreamStatus: outcome.status,
          unbilled: true,
        });
        // The upstream's own retry and rate-limit headers win over the key's: they say when to come back.
        return errorResponse(ctx.format, outcome.error, refusal(), headers);
      case "reply": {
        const counted = outcome.inputTokens === undefined ? p : withInputTokens(p, outcome.inputTokens);
        const metered = finish;
        // A reply the client asked to keep is stored before the client sees its end (a format
        // that keeps none needs no wrapper: one async frame less per request).
        const end = !client.toStore
          ? metered
          : async (e: Ending) => {
              await metered(e);
              if (e.status === 200 && !e.aborted) await remember(deps, key, client, ctx.id, p.guard);
            };
        // A stream cut after its 200 may be continued elsewhere (routing.continuation): a deployment
        // that does not continue (worked out at start) makes no continuer.
        const continuer =
          p.stream && sent.deployment.continuation
            ? streamContinuer(deps, ctx, p.client, sent, size, route, guard)
            : undefined;
        return await relay(
          deps,
          ctx,
          counted,
          outcome.response,
          headers!,
          tally,
          end,
          outcome.watch,
          continuer && { continuer, route },
        );
      }
      default: {
        const never: never = outcome;
        return never;
      }
    }
  } catch (e) {
    const err = toGatewayError(e, deps.logger, ctx.id);
    if (finish) {
      // Thrown before the reply reached the client: an upstream failure before any output, unbilled.
      await finish({ status: ctx.format.renderError(err, ctx.id).status, upstreamStatus, unbilled: true });
    } else if (guarded && admitted && err.code === "guardrail_blocked") {
      // Blocked by a policy before any upstream call: a record of it, billed nothing.
      const { guard, key, target, stream } = guarded;
      const tally = new UsageTally();
      await meter(
        deps,
        { ctx, key, target, stream, tally, admitted, countPrompt: () => 0, guard },
        {
          status: err.status,
          upstreamStatus: 0,
          unbilled: true,
        },
      );
    } else {
      // Refused before any upstream call: no record, and the admitted estimate is given back.
      admitted?.settle(0);
      on.onRefused?.(ctx, err);
      // The status the client sees (its format's: a spent budget is a chat client's 429, not 402).
      on.onFinish?.(ctx, ctx.format.renderError(err, ctx.id).status, undefined);
    }
    return errorResponse(ctx.format, err, refusal());
  }
}
