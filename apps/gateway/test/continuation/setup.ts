/** Gateways for the continuation tests: the four upstream protocols, short idle deadlines, the simulator's cut faults. */
import { expect } from "bun:test";
import { ADMIN_KEY, type Harness } from "../harness";
import { ALPHA, BETA, EPSILON, GAMMA, type Upstream } from "../conformance/upstreams";
import { routedGateway } from "../routing/setup";

export const PROTOCOL_UPSTREAMS: readonly Upstream[] = [ALPHA, BETA, GAMMA, EPSILON];

/** The simulator credential of each upstream's vendor (a deployment's key). */
export function credentialOf(up: Upstream): string {
  return `simulator-${{ messages: "alpha", chat: "beta", generate: "gamma", responses: "epsilon" }[up.protocol]}`;
}

/** The Responses vendor beside the built-in ones, a short idle deadline, and `extra` (routing, fallbacks). */
export function gateway(
  extra = "",
  opts: {
    now?: () => number;
    breakerFailures?: number;
    epsilonFallbacks?: string[];
    continuation?: boolean;
    fetch?: typeof fetch;
  } = {},
): Promise<Harness> {
  return routedGateway(
    `
vendors:
  epsilon: { protocol: responses, base_url: "https://epsilon.example/v1" }
models:
  - { id: epsilon-5, owned_by: epsilon, input_per_mtok: 1.25, output_per_mtok: 10, context_window: 400000, max_output_tokens: 128000, fallbacks: ${JSON.stringify(opts.epsilonFallbacks ?? [])} }
${extra}
routing:
  continuation: ${opts.continuation ?? true}
  timeouts: { idle_ms: 300 }
  breaker: { failures: ${opts.breakerFailures ?? 1000}, cooldown_s: 30 }
`,
    { ...(opts.now ? { now: opts.now } : {}), ...(opts.fetch ? { fetch: opts.fetch } : {}) },
  );
}

/** A reply of fixed words (so any model, asked to go on, says the same), in 8 deltas. */
export const WORDS =
  "Streams that survive their upstream keep every word in order, with nothing repeated and nothing lost on the way.";
export const PROMPT = `Tell me. [sim chunks=8 text="${WORDS}"]`;

/** The ledger row of the request that answered with `res`. */
export async function rowOf(h: Harness, res: Response): Promise<Record<string, any>> {
  const id = res.headers.get("x-turnpike-request-id") ?? res.headers.get("x-request-id");
  const r = await fetch(`${h.url}/admin/usage`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const { data } = (await r.json()) as { data: Record<string, any>[] };
  const row = data.find((d) => d.request_id === id);
  expect(row).toBeDefined();
  return row!;
}
