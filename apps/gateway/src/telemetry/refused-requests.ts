import type { GatewayError } from "@turnpike/providers";
import type { RequestContext } from "../request/context";
import type { PipelineHooks } from "../request/events";
import type { Endpoint } from "../vocabulary/format";
import { endpointOfRequest } from "./gen-ai-names";

/** A refused request as the live log shows it: who, what, and why — never what was sent. */
export interface RefusedRequest {
  request_id: string;
  created_at: string;
  /** The key, when it was accepted before the refusal (empty otherwise). */
  key_id: string;
  endpoint: Endpoint;
  status: number;
  latency_ms: number;
  /** The error type and message the client got. */
  error_type: string;
  reason: string;
}

/**
 * The last refused requests of this instance (400, 401, 404, 429 … before any upstream call),
 * kept in a ring for the live log (`GET /admin/requests`): a refusal has no usage record, so the
 * ledger never sees it. In memory on purpose — refusals cost nothing and may come in floods (a
 * client retrying a bad key); a bounded ring cannot be made to grow by them. With several
 * instances each keeps its own.
 */
export class RefusalLog implements PipelineHooks {
  private readonly ring: (RefusedRequest | undefined)[];
  private next = 0;
  private readonly keys = new WeakMap<RequestContext, string>();

  constructor(
    readonly capacity = 1000,
    private readonly now: () => number = Date.now,
  ) {
    this.ring = new Array(capacity);
  }

  onAuthenticated(ctx: RequestContext, keyId: string): void {
    this.keys.set(ctx, keyId);
  }

  onRefused(ctx: RequestContext, error: GatewayError): void {
    this.ring[this.next] = {
      request_id: ctx.id,
      created_at: new Date(this.now()).toISOString(),
      key_id: this.keys.get(ctx) ?? "",
      endpoint: endpointOfRequest(ctx),
      // The status the client saw (its format's: a spent budget is a chat client's 429, not 402).
      status: ctx.format.renderError(error, ctx.id).status,
      latency_ms: Math.round((performance.now() - ctx.started) * 100) / 100,
      error_type: error.type,
      reason: error.message,
    };
    this.next = (this.next + 1) % this.capacity;
  }

  /**
   * Refusals at or after `since` (ISO 8601; all when absent), newest first, at most `limit`; with
   * `before`, only those older than it (by time, then request id: a page's cursor).
   */
  list(
    since: string | undefined,
    limit: number,
    before?: { created_at: string; request_id: string },
  ): RefusedRequest[] {
    const out: RefusedRequest[] = [];
    for (let i = 1; i <= this.capacity && out.length < limit; i++) {
      const r = this.ring[(this.next - i + this.capacity) % this.capacity];
      if (!r) break;
      if (since !== undefined && r.created_at < since) break;
      if (
        before &&
        (r.created_at > before.created_at || (r.created_at === before.created_at && r.request_id >= before.request_id))
      )
        continue;
      out.push(r);
    }
    return out;
  }
}
