import type { Target } from "../protocols";
import { Breaker, type BreakerState } from "./breaker";
import type { Catalog } from "./catalog";
import type { CatalogEntry } from "../vocabulary/target";
import { parseModelRouting, type RoutingConfig, type Timeouts } from "./routing-config";
import type { Upstream } from "../vocabulary/target";

/** One place a model is served: a vendor account, the model's name there, its share and its limits. */
export interface Deployment {
  /** Unique within its model: the vendor id (with `:upstream_model` when one vendor serves it twice). */
  name: string;
  model: string;
  /** The catalog entry with this deployment's upstream model name, on its vendor's upstream. */
  target: Target;
  weight: number;
  rpm: number | undefined;
  tpm: number | undefined;
  breaker: Breaker;
  /**
   * A stream it serves that is cut after its 200 is continued: its row's `continuation`, else the
   * routing section's, and only while the section allows any (`continuation` on and
   * `continuation_attempts` above 0). Worked out at start: off, no continuer is made for its streams.
   */
  continuation: boolean;
  /** This minute's requests and prompt tokens (for rpm/tpm), from `windowStart`. */
  window: { start: number; requests: number; tokens: number };
}

/** How one catalog model is served. */
export interface Route {
  model: string;
  deployments: Deployment[];
  fallbacks: string[];
  timeouts: Timeouts;
  /**
   * The chain compiled for this route when the router is built (issue 47): its one deployment
   * when it has one and no fallback — each request is then one direct attempt
   * (direct-attempt.ts), with no session, window count or fallback search — else undefined, the
   * planned loop (attempts.ts).
   */
  direct: Deployment | undefined;
}

const MINUTE = 60_000;

/** Has the deployment room under its own rpm and tpm for a prompt of `tokens`? */
function hasRoom(d: Deployment, now: number, tokens: number): boolean {
  if (d.rpm === undefined && d.tpm === undefined) return true;
  if (now - d.window.start >= MINUTE) d.window = { start: now, requests: 0, tokens: 0 };
  if (d.rpm !== undefined && d.window.requests >= d.rpm) return false;
  return d.tpm === undefined || d.window.tokens + tokens <= d.tpm;
}

/** FNV-1a of a string: a stable number for a session id and a deployment. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0) / 0x1_0000_0000;
}

/**
 * Every model's deployments, fallbacks and timeouts, and the choice of a deployment per attempt.
 * State (circuits, minute counters) lives in this process.
 */
export class Router {
  constructor(
    private readonly routes: ReadonlyMap<string, Route>,
    readonly settings: RoutingConfig,
  ) {}

  route(model: string): Route | undefined {
    return this.routes.get(model);
  }

  /**
   * A deployment for the next attempt, or undefined when none is healthy with room. Weighted
   * random; with a session id, a stable choice among the same healthy set (weighted rendezvous
   * hashing), so one session stays on one deployment while it is healthy. `skip` holds the
   * deployments this request already tried. `anyState`: open circuits too (when there is nowhere
   * else to go, the upstream itself is asked rather than the client refused). `preferred`: the
   * deployment the session is on already (dispatch/affinity.ts), chosen whenever it is usable.
   */
  pick(
    route: Route,
    now: number,
    tokens: number,
    session: string | undefined,
    skip: ReadonlySet<Deployment> | undefined,
    anyState = false,
    preferred?: string,
  ): Deployment | undefined {
    const all = route.deployments;
    const usable = (d: Deployment) =>
      !skip?.has(d) && (anyState || d.breaker.available(now)) && hasRoom(d, now, tokens);
    let chosen: Deployment | undefined;
    if (all.length === 1) {
      if (usable(all[0]!)) chosen = all[0];
    } else {
      const ok = all.filter(usable);
      if (ok.length === 0) return undefined;
      // The session's own deployment, when it is healthy and has room.
      chosen = preferred === undefined ? undefined : ok.find((d) => d.name === preferred);
      if (chosen === undefined && session !== undefined) {
        let best = Number.POSITIVE_INFINITY;
        for (const d of ok) {
          const score = -Math.log(hash(`${session}\n${d.name}`) || Number.MIN_VALUE) / d.weight;
          if (score < best) [best, chosen] = [score, d];
        }
      } else if (chosen === undefined) {
        let r = Math.random() * ok.reduce((s, d) => s + d.weight, 0);
        chosen = ok.find((d) => (r -= d.weight) < 0) ?? ok[ok.length - 1];
      }
    }
    if (!chosen) return undefined;
    if (!anyState) chosen.breaker.take(now);
    if (chosen.rpm !== undefined || chosen.tpm !== undefined) {
      chosen.window.requests++;
      chosen.window.tokens += tokens;
    }
    return chosen;
  }

  /** Every deployment, as `GET /admin/deployments` lists them. */
  list(now: number): {
    model: string;
    deployment: string;
    vendor: string;
    upstream_model: string;
    weight: number;
    state: BreakerState;
    consecutive_failures: number;
    failures: number;
    last_failure_at: string | null;
    last_error: string | null;
    latency_ms: number;
  }[] {
    const out = [];
    for (const r of this.routes.values()) {
      for (const d of r.deployments) {
        const b = d.breaker;
        out.push({
          model: d.model,
          deployment: d.name,
          vendor: d.target.upstream.vendor,
          upstream_model: d.target.entry.upstream_model,
          weight: d.weight,
          state: b.state(now),
          consecutive_failures: b.consecutiveFailures,
          failures: b.failuresTotal,
          last_failure_at: b.lastFailureAt === undefined ? null : new Date(b.lastFailureAt).toISOString(),
          last_error: b.lastError ?? null,
          latency_ms: Math.round(b.latencyMs * 100) / 100,
        });
      }
    }
    return out;
  }
}

function deployment(
  model: CatalogEntry,
  upstream: Upstream,
  name: string,
  settings: RoutingConfig,
  row?: {
    weight: number;
    upstream_model: string | undefined;
    rpm: number | undefined;
    tpm: number | undefined;
    continuation?: boolean | undefined;
  },
): Deployment {
  const upstreamModel = row?.upstream_model ?? model.upstream_model;
  // On its own vendor a model speaks its row's protocol (a row may name another than the vendor's
  // usual one, e.g. `protocol: responses` on a chat vendor); on another vendor, that vendor's.
  const protocol = upstream.vendor === model.owned_by ? model.protocol : upstream.protocol;
  const entry =
    upstreamModel === model.upstream_model && protocol === model.protocol
      ? model
      : { ...model, upstream_model: upstreamModel, protocol };
  return {
    name,
    model: model.id,
    target: { entry, upstream },
    weight: row?.weight ?? 1,
    rpm: row?.rpm,
    tpm: row?.tpm,
    breaker: new Breaker(settings.breaker),
    continuation: settings.continuation && settings.continuationAttempts > 0 && (row?.continuation ?? true),
    window: { start: 0, requests: 0, tokens: 0 },
  };
}

/**
 * The routes of every catalog model: the config file's `deployments` (absent = one deployment on
 * the owner vendor), `fallbacks` and `timeouts` over `routing.timeouts`, each with the chain its
 * requests run (`Route.direct`). `where` names the file. Built once per process (boot.ts): a change
 * to the file is a restart, which compiles every route again (decisions/0033-compiled-route-chain.md).
 */
export function buildRouter(
  catalog: Catalog,
  upstreams: ReadonlyMap<string, Upstream>,
  fileModels: readonly unknown[],
  settings: RoutingConfig,
  where: string,
): Router {
  const ids = new Set(catalog.all().map((e) => e.id));
  const embedding = new Set(
    catalog
      .all()
      .filter((e) => e.embedding_dimensions !== undefined)
      .map((e) => e.id),
  );
  const vendors = new Set(upstreams.keys());
  const rows = new Map<string, ReturnType<typeof parseModelRouting>>();
  fileModels.forEach((raw, i) => {
    // The catalog has checked each row's shape and id already.
    const row = raw as Record<string, unknown>;
    rows.set(row.id as string, parseModelRouting(row, where, `models[${i}]`, vendors, ids, embedding));
  });
  const routes = new Map<string, Route>();
  for (const entry of catalog.all()) {
    const r = rows.get(entry.id);
    const own = upstreams.get(entry.owned_by);
    if (!own) throw new Error(`model ${entry.id}: no upstream for its vendor ${entry.owned_by}`);
    const list = r?.deployments;
    const twice = (v: string) => (list ?? []).filter((d) => d.vendor === v).length > 1;
    const deployments = list
      ? list.map((d) =>
          deployment(
            entry,
            upstreams.get(d.vendor)!,
            twice(d.vendor) ? `${d.vendor}:${d.upstream_model ?? entry.upstream_model}` : d.vendor,
            settings,
            d,
          ),
        )
      : [deployment(entry, own, entry.owned_by, settings)];
    const fallbacks = r?.fallbacks ?? [];
    routes.set(entry.id, {
      model: entry.id,
      deployments,
      fallbacks,
      timeouts: { ...settings.timeouts, ...r?.timeouts },
      direct: deployments.length === 1 && fallbacks.length === 0 ? deployments[0] : undefined,
    });
  }
  return new Router(routes, settings);
}
