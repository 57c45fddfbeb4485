import { GatewayError } from "@turnpike/providers";
import { Elysia } from "elysia";
import type { GatewayDeps } from "../deps";
import { isAdminKey } from "../keys/admin-key";
import { DEFAULT_ROTATION_GRACE_SECONDS, type KeyFields, type NewKey } from "../keys/key-service";
import { FORMATS } from "../formats";
import { tooManyFailures } from "../pipeline/authenticate";
import { clientAddress, type Connection } from "../pipeline/client-address";
import { readJsonObject, invalid } from "../pipeline/read-body";
import { PROMPT_CACHE_MODES } from "../routing/catalog";
import { newRequestId } from "../pipeline/request-id";
import { errorResponse, toGatewayError } from "../pipeline/respond";
import type { AdminKey } from "../openapi/admin-schemas";
import type { KeyRecord, UsageFilter, UsageGroup, UsageRecord } from "../state/store";
import { modelEntry } from "./models";
import { mergeNewestFirst, refusalLine, requestLine, SERIES_BY, type SeriesBy, seriesRange, toSeries } from "./usage-series";

/** A key as the admin API shows it: never the secret, never its hash. */
export function publicKey(k: KeyRecord, spentUsd?: number): AdminKey {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    models: k.models,
    rpm: k.rpm,
    tpm: k.tpm,
    model_limits: k.model_limits,
    budget_usd: k.budget_usd,
    ...(spentUsd !== undefined ? { spent_this_month_usd: Math.round(spentUsd * 1e6) / 1e6 } : {}),
    expires_at: k.expires_at,
    prompt_cache: k.prompt_cache ?? null,
    previous_secret_valid_until: k.prev_valid_until,
    created_at: k.created_at,
    updated_at: k.updated_at,
    revoked_at: k.revoked_at,
  };
}

/**
 * The admin key, or a 401. Failures are counted per client address in their own counters (an
 * inference key's failures never lock out the admin API, nor the other way round); a locked-out
 * address gets a 429 for anything but the right key.
 */
async function checkAdmin(deps: GatewayDeps, request: Request, server: Connection | null | undefined): Promise<void> {
  const auth = request.headers.get("authorization") ?? "";
  if (isAdminKey(auth.replace(/^bearer\s+/i, ""), deps.adminKey)) return;
  const address = `admin|${clientAddress(server, request, deps.config.trustedProxies)}`;
  const wait = await deps.authFailures.blockedFor(address);
  if (wait > 0) throw tooManyFailures(wait);
  await deps.authFailures.fail(address);
  throw new GatewayError({ status: 401, type: "authentication_error", message: "Admin API: send `Authorization: Bearer $TURNPIKE_ADMIN_KEY`." });
}

/** Upper bounds of a key's limits: beyond them a number is a typo, not a policy. */
export const KEY_LIMIT_BOUNDS = { rpm: 1_000_000, tpm: 10_000_000_000, budget_usd: 10_000_000 } as const;

function positiveInt(v: unknown, field: string, max: number): number | null {
  if (v === null) return null;
  if (typeof v !== "number" || !Number.isInteger(v) || v <= 0 || v > max) throw invalid(`${field}: must be a whole number from 1 to ${max}, or null, got ${JSON.stringify(v)}`, field);
  return v;
}

/** A model-list entry: a catalog id, or a `*` glob that names at least one catalog model. */
function checkModelPattern(pattern: string, catalogIds: readonly string[]): void {
  // Printable characters only (catalog ids may hold spaces and parentheses), and not too long.
  if (pattern.length > 200 || !/^[\x20-\x7e]+$/.test(pattern) || pattern.trim() !== pattern) {
    throw invalid(`models: ${JSON.stringify(pattern.slice(0, 60))} is not a model id or glob (printable characters, at most 200, no surrounding spaces)`, "models");
  }
  const re = new RegExp(`^${pattern.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
  if (!catalogIds.some((id) => re.test(id))) throw invalid(`models: ${JSON.stringify(pattern)} names no catalog model (see GET /v1/models)`, "models");
}

/**
 * Checks the fields of `POST /admin/keys` (name required) and `PATCH /admin/keys/:id` (all
 * optional; `null` clears a limit).
 */
export function parseKeyFields(body: Record<string, unknown>, requireName: boolean, catalogIds: readonly string[]): KeyFields {
  const out: KeyFields = {};
  const known = new Set(["name", "models", "rpm", "tpm", "model_limits", "budget_usd", "expires_at", "prompt_cache"]);
  for (const k of Object.keys(body)) if (!known.has(k)) throw invalid(`${k}: unknown field; expected one of ${[...known].join(", ")}`, k);
  if (body.name !== undefined || requireName) {
    if (typeof body.name !== "string" || body.name.trim() === "") throw invalid(`name: required non-empty string, got ${JSON.stringify(body.name)}`, "name");
    out.name = body.name.trim();
  }
  if (body.models !== undefined) {
    if (body.models !== null && (!Array.isArray(body.models) || !body.models.every((m) => typeof m === "string" && m !== ""))) {
      throw invalid(`models: must be a list of model ids or * globs, or null for all, got ${JSON.stringify(body.models)}`, "models");
    }
    for (const m of (body.models ?? []) as string[]) checkModelPattern(m, catalogIds); // strings: checked just above
    out.models = body.models as string[] | null; // checked just above: null or a list of non-empty strings
  }
  if (body.rpm !== undefined) out.rpm = positiveInt(body.rpm, "rpm", KEY_LIMIT_BOUNDS.rpm);
  if (body.tpm !== undefined) out.tpm = positiveInt(body.tpm, "tpm", KEY_LIMIT_BOUNDS.tpm);
  if (body.model_limits !== undefined) {
    const ml = body.model_limits;
    if (ml !== null && (typeof ml !== "object" || Array.isArray(ml))) throw invalid(`model_limits: must be an object {model id: {rpm?, tpm?}} or null, got ${JSON.stringify(ml)}`, "model_limits");
    const parsed: NonNullable<KeyFields["model_limits"]> = {};
    for (const [model, lim] of Object.entries((ml ?? {}) as Record<string, unknown>)) { // an object: checked just above
      if (!catalogIds.includes(model)) throw invalid(`model_limits.${model}: not a catalog model id (see GET /v1/models)`, "model_limits");
      if (typeof lim !== "object" || lim === null || Array.isArray(lim)) throw invalid(`model_limits.${model}: must be {rpm?, tpm?}`, "model_limits");
      const l = lim as Record<string, unknown>; // an object: checked just above
      for (const k of Object.keys(l)) if (k !== "rpm" && k !== "tpm") throw invalid(`model_limits.${model}.${k}: unknown field; expected rpm or tpm`, "model_limits");
      parsed[model] = {
        rpm: l.rpm === undefined ? null : positiveInt(l.rpm, `model_limits.${model}.rpm`, KEY_LIMIT_BOUNDS.rpm),
        tpm: l.tpm === undefined ? null : positiveInt(l.tpm, `model_limits.${model}.tpm`, KEY_LIMIT_BOUNDS.tpm),
      };
    }
    out.model_limits = ml === null ? null : parsed;
  }
  if (body.budget_usd !== undefined) {
    const b = body.budget_usd;
    if (b !== null && (typeof b !== "number" || !Number.isFinite(b) || b <= 0 || b > KEY_LIMIT_BOUNDS.budget_usd)) {
      throw invalid(`budget_usd: must be a number of US dollars above 0 and at most ${KEY_LIMIT_BOUNDS.budget_usd}, or null, got ${JSON.stringify(b)}`, "budget_usd");
    }
    out.budget_usd = b as number | null; // checked just above
  }
  if (body.expires_at !== undefined) {
    const e = body.expires_at;
    if (e !== null && (typeof e !== "string" || Number.isNaN(Date.parse(e)))) throw invalid(`expires_at: must be an ISO 8601 time or null, got ${JSON.stringify(e)}`, "expires_at");
    out.expires_at = e === null ? null : new Date(e as string).toISOString(); // a date string: checked just above
  }
  if (body.prompt_cache !== undefined) {
    const p = body.prompt_cache;
    if (p !== null && !PROMPT_CACHE_MODES.some((m) => m === p)) throw invalid(`prompt_cache: must be ${PROMPT_CACHE_MODES.join(" or ")}, or null for the model's own setting, got ${JSON.stringify(p)}`, "prompt_cache");
    out.prompt_cache = p as KeyFields["prompt_cache"]; // checked just above
  }
  return out;
}

const GROUPS: readonly UsageGroup[] = ["key", "model", "day"];

function found<T>(v: T | undefined, id: string): T {
  if (v === undefined) throw new GatewayError({ status: 404, type: "not_found_error", code: "key_not_found", param: "id", message: `No key with id ${id}.` });
  return v;
}

function isoParam(q: URLSearchParams, name: string): string | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw invalid(`${name}: must be an ISO 8601 date or time, got ${JSON.stringify(v)}`, name);
  return new Date(t).toISOString();
}

/** A listing's position: the last record of a page (its time and id), opaque to the caller. */
function encodeCursor(r: UsageRecord): string {
  return Buffer.from(JSON.stringify([r.created_at, r.request_id])).toString("base64url");
}

function decodeCursor(cursor: string): NonNullable<UsageFilter["before"]> {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string") return { created_at: v[0], request_id: v[1] };
  } catch {
    // refused below
  }
  throw invalid("cursor: not a cursor this API gave out (use next_cursor of the previous page as it came)", "cursor");
}

/** The default page of `GET /admin/usage`. */
const DEFAULT_USAGE_PAGE = 1000;

/** `limit`: a whole number from 1 to `max`, else `fallback` when absent. */
function limitParam(q: URLSearchParams, fallback: number, max: number): number {
  const limit = q.get("limit");
  if (limit === null) return fallback;
  const n = Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > max) throw invalid(`limit: a whole number from 1 to ${max}, got ${JSON.stringify(limit)}`, "limit");
  return n;
}

/** The request log's default and largest page (`GET /admin/requests`). */
const REQUESTS_PAGE = { fallback: 100, max: 1000 } as const;

/** Admin API (docs/design.md, "Interfaces"): keys and usage, guarded by `TURNPIKE_ADMIN_KEY`. Errors use the chat format's envelope. */
export const adminModule = (deps: GatewayDeps) => {
  const catalogIds = deps.catalog.all().map((e) => e.id);
  const guard = async (request: Request, server: Connection | null | undefined, fn: () => Promise<Response> | Response): Promise<Response> => {
    const requestId = newRequestId();
    try {
      await checkAdmin(deps, request, server);
      return await fn();
    } catch (e) {
      return errorResponse(FORMATS.chat, toGatewayError(e, deps.logger, requestId), requestId);
    }
  };
  const body = (request: Request) => readJsonObject(request, deps.config.maxBodyBytes);
  return new Elysia({ name: "module.admin" })
    .post(
      "/admin/keys",
      ({ request, server }) =>
        guard(request, server, async () => {
          const input = parseKeyFields(await body(request), true, catalogIds) as NewKey; // requireName: name is set
          const { record, secret } = await deps.keys.create(input);
          return Response.json({ ...publicKey(record), key: secret }, { status: 201 });
        }),
      { parse: "none" },
    )
    // Every model's deployments with their circuit (closed, open, half_open), failures and latency.
    .get("/admin/deployments", ({ request, server }) => guard(request, server, () => Response.json({ data: deps.router.list(deps.now()) })))
    .get("/admin/keys", ({ request, server }) =>
      guard(request, server, async () => {
        const keys = await deps.keys.list();
        return Response.json({ data: await Promise.all(keys.map(async (k) => publicKey(k, await deps.spend.spent(k.id)))) });
      }),
    )
    .get("/admin/keys/:id", ({ request, params, server }) =>
      guard(request, server, async () => Response.json(publicKey(found(await deps.keys.get(params.id), params.id), await deps.spend.spent(params.id)))),
    )
    .patch(
      "/admin/keys/:id",
      ({ request, params, server }) =>
        guard(request, server, async () => {
          const fields = parseKeyFields(await body(request), false, catalogIds);
          const record = found(await deps.keys.update(params.id, fields), params.id);
          // New limits take effect from a full bucket.
          await deps.limiter.reset(record.id);
          return Response.json(publicKey(record, await deps.spend.spent(record.id)));
        }),
      { parse: "none" },
    )
    .post(
      "/admin/keys/:id/rotate",
      ({ request, params, server }) =>
        guard(request, server, async () => {
          const b = (request.headers.get("content-length") === "0" ? {} : await body(request).catch(() => ({}))) as { grace_seconds?: unknown }; // only grace_seconds is read, and checked
          const grace = b.grace_seconds ?? DEFAULT_ROTATION_GRACE_SECONDS;
          if (typeof grace !== "number" || !Number.isInteger(grace) || grace < 0 || grace > 30 * 86400) {
            throw invalid(`grace_seconds: must be a whole number of seconds from 0 to 2592000 (30 days), got ${JSON.stringify(grace)}`, "grace_seconds");
          }
          const rotated = await deps.keys.rotate(params.id, grace);
          const { record, secret } = found(rotated, params.id);
          return Response.json({ ...publicKey(record), key: secret });
        }),
      { parse: "none" },
    )
    .delete("/admin/keys/:id", ({ request, params, server }) =>
      guard(request, server, async () => {
        const record = found(await deps.keys.revoke(params.id), params.id);
        return Response.json({ ...publicKey(record), revoked: true });
      }),
    )
    .get("/admin/usage", ({ request, server }) =>
      guard(request, server, async () => {
        const q = new URL(request.url).searchParams;
        const filter: UsageFilter = {};
        if (q.get("key_id")) filter.key_id = q.get("key_id")!;
        if (q.get("model")) filter.model = q.get("model")!;
        const since = isoParam(q, "since");
        const until = isoParam(q, "until");
        if (since) filter.since = since;
        if (until) filter.until = until;
        await deps.ledger.flush();
        const groupBy = q.get("group_by");
        if (groupBy !== null) {
          const groups = groupBy.split(",").map((g) => g.trim()).filter(Boolean);
          for (const g of groups) if (!GROUPS.includes(g as UsageGroup)) throw invalid(`group_by: each of key, model, day; got ${JSON.stringify(g)}`, "group_by");
          return Response.json({ data: await deps.store.aggregateUsage(filter, groups as UsageGroup[]) }); // each checked in the loop above
        }
        const page = limitParam(q, DEFAULT_USAGE_PAGE, 10_000);
        const cursor = q.get("cursor");
        if (cursor) filter.before = decodeCursor(cursor);
        // Newest first; one more than the page says whether another page follows.
        const rows = await deps.store.queryUsage({ ...filter, newestFirst: true, limit: page + 1 });
        const data = rows.slice(0, page);
        const last = data.at(-1);
        return Response.json({ data, next_cursor: rows.length > page && last ? encodeCursor(last) : null });
      }),
    )
    .get("/admin/usage/daily", ({ request, server }) =>
      guard(request, server, async () => {
        // Requests, tokens and cost per UTC day, one zero-filled series per model or key.
        const q = new URL(request.url).searchParams;
        const by = (q.get("by") ?? "model") as SeriesBy; // checked just below
        if (!SERIES_BY.includes(by)) throw invalid(`by: model or key, got ${JSON.stringify(by)}`, "by");
        const range = seriesRange(q, deps.now());
        await deps.ledger.flush();
        const rows = await deps.store.aggregateUsage({ since: range.since, until: range.until }, ["day", by]);
        const failed = await deps.store.aggregateUsage({ since: range.since, until: range.until, failed: true }, ["day", by]);
        return Response.json({ by, days: range.days, series: toSeries(range.days, rows, by, failed) });
      }),
    )
    .get("/admin/requests", ({ request, server }) =>
      guard(request, server, async () => {
        // The live request log, newest first. A poller asks again from a little before the
        // newest time it has and merges by request id: records shipped late by another
        // instance's journal carry their own (earlier) finish time.
        const q = new URL(request.url).searchParams;
        const since = isoParam(q, "since");
        await deps.ledger.flush();
        const limit = limitParam(q, REQUESTS_PAGE.fallback, REQUESTS_PAGE.max);
        const rows = await deps.store.queryUsage({ ...(since ? { since } : {}), newestFirst: true, limit });
        // Refused requests have no usage record: this instance's are merged in, with their reason.
        const refused = deps.refusals?.list(since, limit) ?? [];
        return Response.json({ data: mergeNewestFirst(rows.map(requestLine), refused.map(refusalLine), limit) });
      }),
    )
    .get("/admin/models", ({ request, server }) =>
      // The whole catalog with prices (`GET /v1/models` lists only what one key may call).
      guard(request, server, () => Response.json({ data: deps.catalog.all().map((e) => ({ ...modelEntry(e), vendor: e.owned_by, protocol: e.protocol })) })),
    );
};
