import { decodeCursor, encodeCursor } from "../http/page-cursor";
import { Value } from "@sinclair/typebox/value";
import { GatewayError } from "@turnpike/providers";
import { explainErrors } from "@turnpike/schema";
import type { GatewayDeps } from "../wiring/deps";
import { DEFAULT_ROTATION_GRACE_SECONDS, type KeyFields, type NewKey } from "../keys/key-service";
import { readJsonObject } from "../request/read-body";
import { invalid } from "../vocabulary/client-errors";
import { isRecord, validationError } from "../vocabulary/client-errors";
import { toolPatternProblem } from "../tools/tool-allow-list";
import { isCleanId, MAX_ID_CHARS, nameProblem, textProblem } from "../storage/clean-text";
import { type AdminKey, AdminKeyBody, AdminRotate, ModelLimit } from "../openapi/admin-schemas";
import type { KeyRecord, LatencyGroup, UsageFilter, UsageGroup } from "../storage/store";
import { LATENCY_GROUPS } from "../storage/usage-latency";
import { LATENCY_BOUNDS } from "../storage/usage-rollup";
import { modelEntry } from "../formats/model-card";
import type { Route } from "../http/route";
import { admin, idParam, json, ok, query, ref } from "../openapi/operations";
import { forbidden } from "../access/principal";
import {
  changesKey,
  createsKeyIn,
  isAdmin,
  type KeyOwnership,
  type Principal,
  readsAll,
  readsKey,
  revokesKey,
} from "../teams/roles";
import { applyTeamRules, checkCeilings } from "../teams/key-ceilings";
import { DEFAULT_TEAM_ID, teamStoreOf } from "../teams/team-store";
import { adminGuard, type SessionPrincipal } from "../access/admin-guard";
import { foldByOwner, OWNERS, type Owner } from "./usage-owners";
import {
  mergeNewestFirst,
  refusalLine,
  requestLine,
  SERIES_BY,
  type SeriesBy,
  seriesRange,
  toSeries,
} from "./usage-series";

/** A key as the admin API shows it: never the secret, never its hash. */
/** The `since` and `until` of a range of UTC days (`seriesRange`), as the description document gives them. */
function dayRangeParams() {
  return [
    query("since", "First day, `YYYY-MM-DD` (default: 13 days before `until`).", { type: "string", format: "date" }),
    query("until", "Last day, `YYYY-MM-DD`, included (default: today, UTC); at most 366 days in all.", {
      type: "string",
      format: "date",
    }),
  ];
}

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
    tools: k.tools ?? null,
    guardrails: k.guardrails ?? null,
    previous_secret_valid_until: k.prev_valid_until,
    created_at: k.created_at,
    updated_at: k.updated_at,
    revoked_at: k.revoked_at,
    team_id: k.team_id ?? null,
    user_id: k.user_id ?? null,
  };
}

/** A model-list entry's problem, if it has one: a catalog id, or a `*` glob that names at least one catalog model. */
function modelPatternIssue(pattern: string, catalogIds: readonly string[]): string | undefined {
  // Printable characters only (catalog ids may hold spaces and parentheses), and not too long.
  if (pattern.length > 200 || !/^[\x20-\x7e]+$/.test(pattern) || pattern.trim() !== pattern) {
    return `models: ${JSON.stringify(pattern.slice(0, 60))} is not a model id or glob (printable characters, at most 200, no surrounding spaces)`;
  }
  const re = new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
  if (!catalogIds.some((id) => re.test(id)))
    return `models: ${JSON.stringify(pattern)} names no catalog model (see GET /v1/models)`;
  return undefined;
}

/**
 * Checks the fields of `POST /admin/keys` (name required) and `PATCH /admin/keys/:id` (all
 * optional; `null` clears a limit) against {@link AdminKeyBody} and the catalog: one 400 naming
 * the first mistake, and the next few, in the words request errors use.
 */
export function parseKeyFields(
  body: Record<string, unknown>,
  requireName: boolean,
  catalogIds: readonly string[],
  mcpServers: readonly string[] = [],
  policyNames: readonly string[] = [],
): KeyFields {
  const issues = Value.Check(AdminKeyBody, body) ? [] : explainErrors(AdminKeyBody, body);
  const add = (path: string, message: string) => issues.push({ path, message });
  if (requireName && body.name === undefined) add("name", "name: required non-empty string, got nothing");
  if (typeof body.name === "string" && body.name.trim() === "")
    add("name", `name: required non-empty string, got ${JSON.stringify(body.name)}`);
  else if (typeof body.name === "string") {
    const problem = nameProblem(body.name, MAX_NAME_CHARS);
    if (problem) add("name", `name: ${problem}`);
  }
  if (Array.isArray(body.models)) {
    for (const m of body.models)
      if (typeof m === "string" && m !== "") {
        const issue = modelPatternIssue(m, catalogIds);
        if (issue) add("models", issue);
      }
  }
  if (isRecord(body.model_limits)) {
    for (const [model, limits] of Object.entries(body.model_limits)) {
      if (!catalogIds.includes(model))
        add("model_limits", `model_limits.${model}: not a catalog model id (see GET /v1/models)`);
      // Named as the body names it (`model_limits.beta-5.rpm`), so the model id reads as sent.
      else if (!Value.Check(ModelLimit, limits))
        for (const i of explainErrors(ModelLimit, limits, `model_limits.${model}`)) add("model_limits", i.message);
    }
  }
  if (Array.isArray(body.tools)) {
    for (const p of body.tools)
      if (typeof p === "string" && p !== "") {
        const problem = toolPatternProblem(p, mcpServers);
        if (problem) add("tools", `tools: ${JSON.stringify(p.slice(0, 60))}: ${problem}`);
      }
  }
  if (Array.isArray(body.guardrails))
    for (const g of body.guardrails)
      if (typeof g === "string" && !policyNames.includes(g))
        add(
          "guardrails",
          `guardrails: ${JSON.stringify(g.slice(0, 60))} is not a policy of the config's guardrails.policies (${policyNames.length ? policyNames.join(", ") : "none configured"})`,
        );
  if (typeof body.expires_at === "string" && Number.isNaN(Date.parse(body.expires_at)))
    add("expires_at", `expires_at: must be an ISO 8601 time or null, got ${JSON.stringify(body.expires_at)}`);
  if (issues.length) throw validationError(issues);
  const b = body as AdminKeyBody; // checked just above, field by field
  const out: KeyFields = {};
  if (b.name !== undefined) out.name = b.name.trim();
  if (b.models !== undefined) out.models = b.models;
  if (b.rpm !== undefined) out.rpm = b.rpm;
  if (b.tpm !== undefined) out.tpm = b.tpm;
  if (b.model_limits !== undefined) {
    // Each entry was checked against ModelLimit just above.
    const limits = b.model_limits as Record<string, { rpm?: number | null; tpm?: number | null }> | null;
    out.model_limits =
      limits === null
        ? null
        : Object.fromEntries(Object.entries(limits).map(([m, l]) => [m, { rpm: l.rpm ?? null, tpm: l.tpm ?? null }]));
  }
  if (b.budget_usd !== undefined) out.budget_usd = b.budget_usd;
  if (b.expires_at !== undefined) out.expires_at = b.expires_at === null ? null : new Date(b.expires_at).toISOString();
  if (b.prompt_cache !== undefined) out.prompt_cache = b.prompt_cache;
  if (b.tools !== undefined) out.tools = b.tools;
  if (b.guardrails !== undefined) out.guardrails = b.guardrails?.length ? [...new Set(b.guardrails)] : null;
  if (b.team_id !== undefined) out.team_id = b.team_id;
  return out;
}

const GROUPS: readonly UsageGroup[] = ["key", "model", "day"];

/** The longest key name: a label for people, shown in lists. */
const MAX_NAME_CHARS = 1000;

/** A key id from the path: one with bytes no key id has is a 404 before any store is asked. */
function keyIdParam(id: string): string {
  if (!isCleanId(id))
    throw new GatewayError({
      status: 404,
      type: "not_found_error",
      code: "key_not_found",
      param: "id",
      message: `No key with id ${JSON.stringify(id.slice(0, 100))}.`,
    });
  return id;
}

/** A text filter (`key_id`, `model`): a 400 for one no stored value could equal. */
function filterParam(q: URLSearchParams, name: string): string | undefined {
  const v = q.get(name);
  if (!v) return undefined;
  const problem = textProblem(v, MAX_ID_CHARS);
  if (problem) throw invalid(`${name}: ${problem}`, name);
  return v;
}

function found<T>(v: T | undefined, id: string): T {
  if (v === undefined)
    throw new GatewayError({
      status: 404,
      type: "not_found_error",
      code: "key_not_found",
      param: "id",
      message: `No key with id ${id}.`,
    });
  return v;
}

function isoParam(q: URLSearchParams, name: string): string | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw invalid(`${name}: must be an ISO 8601 date or time, got ${JSON.stringify(v)}`, name);
  return new Date(t).toISOString();
}

/** A listing's cursor (usage, the request log, keys): a row's time and id, both of clean bytes. */
function readCursor(cursor: string): NonNullable<UsageFilter["before"]> {
  const { at, id } = decodeCursor(cursor, (a, i) => isCleanId(a) && isCleanId(i));
  return { created_at: at, request_id: id };
}

/** The default page of `GET /admin/usage`. */
const DEFAULT_USAGE_PAGE = 1000;

/** `limit`: a whole number from 1 to `max`, else `fallback` when absent. */
function limitParam(q: URLSearchParams, fallback: number, max: number): number {
  const limit = q.get("limit");
  if (limit === null) return fallback;
  const n = Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw invalid(`limit: a whole number from 1 to ${max}, got ${JSON.stringify(limit)}`, "limit");
  return n;
}

/** The request log's default and largest page (`GET /admin/requests`). */
const REQUESTS_PAGE = { fallback: 100, max: 1000 } as const;

/** The key list's default and largest page (`GET /admin/keys`). */
const KEYS_PAGE = { fallback: 500, max: 1000 } as const;

const CURSOR = query("cursor", "`next_cursor` of the previous page.", { type: "string" });

const KEY_ID = idParam("The key's id (`key_…`).");

/** Admin API (docs/design.md, "Interfaces"): keys and usage, guarded by `TURNPIKE_ADMIN_KEY`. Errors use the chat format's envelope. */
export function adminRoutes(deps: GatewayDeps, session?: SessionPrincipal): Route[] {
  const catalogIds = deps.catalog.all().map((e) => e.id);
  const mcpServers = deps.config.mcp.servers.map((s) => s.name);
  const policyNames = [...deps.config.guardrails.policies.keys()];
  const guarded = adminGuard(deps, session);
  /** The key, if the caller may see it (a 404 when there is none, a 403 when it is not theirs). */
  const allowed = (
    who: Principal,
    k: KeyRecord | undefined,
    id: string,
    may: (p: Principal, k: KeyOwnership) => boolean,
    what: string,
  ): KeyRecord => {
    const key = found(k, id);
    if (!may(who, key)) throw forbidden(`${what} key ${id}`);
    return key;
  };
  const body = (request: Request) => readJsonObject(request, deps.config.maxBodyBytes, deps.config.maxBodyValues);
  return [
    {
      method: "POST",
      path: "/admin/keys",
      doc: admin(
        "Create a key (its secret is in this reply only)",
        { 201: { description: "Created.", content: json(ref("AdminKeyWithSecret")) } },
        { requestBody: { required: true, content: json({ allOf: [ref("AdminKeyFields"), { required: ["name"] }] }) } },
      ),
      handle: guarded(async ({ request, who, audit }) => {
        const input = parseKeyFields(await body(request), true, catalogIds, mcpServers, policyNames) as NewKey; // requireName: name is set
        const teamId = input.team_id ?? DEFAULT_TEAM_ID;
        const team = await teamStoreOf(deps.store).team(teamId);
        if (!team)
          throw invalid(`team_id: no team ${JSON.stringify(teamId.slice(0, 100))} (see GET /admin/teams)`, "team_id");
        if (!createsKeyIn(who, teamId)) throw forbidden(`make a key in team ${teamId}`);
        // The team's defaults fill what was not asked for; anyone but an organisation admin stays within its ceilings.
        const fields = applyTeamRules(input, team, !isAdmin(who), deps.now()) as NewKey; // name kept from input
        // A key a bounded caller makes with an expiring token ends with it at the latest.
        if (!isAdmin(who) && who.expires_at && (fields.expires_at == null || fields.expires_at > who.expires_at))
          fields.expires_at = who.expires_at;
        // A key belongs to its team and to whoever made it (a member revokes its own).
        const { record, secret } = await deps.keys.create({
          ...fields,
          team_id: teamId,
          ...(who.owner_id ? { user_id: who.owner_id } : {}),
        });
        await audit({ action: "key.create", target: record.id, after: publicKey(record) });
        return Response.json({ ...publicKey(record), key: secret }, { status: 201 });
      }),
    },
    {
      method: "GET",
      path: "/admin/keys",
      doc: admin(
        "List keys, oldest first, a page at a time",
        ok("A page of keys, with this month's spend.", ref("AdminKeyList")),
        {
          parameters: [
            query("limit", `Keys per page, 1 to ${KEYS_PAGE.max} (default ${KEYS_PAGE.fallback}).`, {
              type: "integer",
              minimum: 1,
              maximum: KEYS_PAGE.max,
            }),
            CURSOR,
          ],
        },
      ),
      handle: guarded(async ({ request, who }) => {
        const q = new URL(request.url).searchParams;
        const page = limitParam(q, KEYS_PAGE.fallback, KEYS_PAGE.max);
        const cursor = q.get("cursor");
        const after = cursor ? readCursor(cursor) : undefined;
        const all = await deps.keys.list(); // oldest first, then by id
        // The first key past the cursor, found by halving (the list is in cursor order).
        let from = 0;
        if (after) {
          let hi = all.length;
          while (from < hi) {
            const mid = (from + hi) >>> 1;
            const k = all[mid]!;
            const past =
              k.created_at > after.created_at || (k.created_at === after.created_at && k.id > after.request_id);
            if (past) hi = mid;
            else from = mid + 1;
          }
        }
        const keys: KeyRecord[] = [];
        let i = from;
        for (; i < all.length && keys.length < page; i++) if (readsKey(who, all[i]!)) keys.push(all[i]!);
        while (i < all.length && !readsKey(who, all[i]!)) i++;
        const last = keys.at(-1);
        return Response.json({
          data: await Promise.all(keys.map(async (k) => publicKey(k, await deps.spend.spent(k.id)))),
          next_cursor: i < all.length && last ? encodeCursor(last.created_at, last.id) : null,
        });
      }),
    },
    {
      method: "GET",
      path: "/admin/keys/{id}",
      doc: admin("Get a key", ok("The key, with this month's spend.", ref("AdminKey")), { parameters: [KEY_ID] }),
      handle: guarded(async ({ params, who }) => {
        const id = keyIdParam(params.id ?? "");
        return Response.json(
          publicKey(allowed(who, await deps.keys.get(id), id, readsKey, "read"), await deps.spend.spent(id)),
        );
      }),
    },
    {
      method: "PATCH",
      path: "/admin/keys/{id}",
      doc: admin("Change a key's limits (null clears one)", ok("The changed key.", ref("AdminKey")), {
        parameters: [KEY_ID],
        requestBody: { required: true, content: json(ref("AdminKeyFields")) },
      }),
      handle: guarded(async ({ request, params, who, audit }) => {
        const id = keyIdParam(params.id ?? "");
        const fields = parseKeyFields(await body(request), false, catalogIds, mcpServers, policyNames);
        if (fields.team_id !== undefined) throw invalid("team_id: a key's team is set when it is made", "team_id");
        const before = allowed(who, await deps.keys.get(id), id, changesKey, "change");
        if (!isAdmin(who)) {
          const team = await teamStoreOf(deps.store).team(before.team_id ?? DEFAULT_TEAM_ID);
          if (team) checkCeilings(fields, team, deps.now());
        }
        const record = found(await deps.keys.update(id, fields), id);
        // New limits take effect from a full bucket.
        await deps.limiter.reset(record.id);
        await audit({ action: "key.update", target: id, before: publicKey(before), after: publicKey(record) });
        return Response.json(publicKey(record, await deps.spend.spent(record.id)));
      }),
    },
    {
      method: "DELETE",
      path: "/admin/keys/{id}",
      doc: admin("Revoke a key", ok("The revoked key.", ref("AdminRevokedKey")), { parameters: [KEY_ID] }),
      handle: guarded(async ({ params, who, audit }) => {
        const id = keyIdParam(params.id ?? "");
        const before = allowed(who, await deps.keys.get(id), id, revokesKey, "revoke");
        const record = found(await deps.keys.revoke(id), id);
        await audit({ action: "key.revoke", target: id, before: publicKey(before), after: publicKey(record) });
        return Response.json({ ...publicKey(record), revoked: true });
      }),
    },
    {
      method: "POST",
      path: "/admin/keys/{id}/rotate",
      doc: admin(
        "Rotate a key's secret (the old one works for `grace_seconds`, default 3600)",
        ok("The key with its new secret, shown this once.", ref("AdminKeyWithSecret")),
        {
          parameters: [KEY_ID],
          requestBody: { required: false, content: json(ref("AdminRotate")) },
        },
      ),
      handle: guarded(async ({ request, params, who, audit }) => {
        const id = keyIdParam(params.id ?? "");
        allowed(who, await deps.keys.get(id), id, changesKey, "rotate");
        const b = request.headers.get("content-length") === "0" ? {} : await body(request).catch(() => ({}));
        if (!Value.Check(AdminRotate, b)) throw validationError(explainErrors(AdminRotate, b));
        const grace = (b as AdminRotate).grace_seconds ?? DEFAULT_ROTATION_GRACE_SECONDS; // checked just above
        const rotated = await deps.keys.rotate(id, grace);
        const { record, secret } = found(rotated, id);
        await audit({ action: "key.rotate", target: id, after: publicKey(record) });
        return Response.json({ ...publicKey(record), key: secret });
      }),
    },
    {
      method: "GET",
      path: "/admin/usage",
      doc: admin(
        "Usage records, newest first, or totals grouped",
        ok("A page of records, or with `group_by` the totals per group.", {
          anyOf: [ref("AdminUsagePage"), ref("AdminUsageGroups")],
        }),
        {
          parameters: [
            query("key_id", "Only this key's records.", { type: "string" }),
            query("model", "Only this model's records.", { type: "string" }),
            query("since", "From this instant (ISO 8601).", { type: "string" }),
            query("until", "Before this instant (ISO 8601).", { type: "string" }),
            query(
              "group_by",
              "Totals per group: any of `key`, `model`, `day`, comma-separated, or `team` or `user` (a key's team or maker) with `model` and `day`.",
              { type: "string" },
            ),
            query("limit", "Records per page, 1 to 10000 (default 1000).", {
              type: "integer",
              minimum: 1,
              maximum: 10000,
            }),
            CURSOR,
          ],
        },
      ),
      handle: guarded(async ({ request, who }) => {
        const q = new URL(request.url).searchParams;
        const filter: UsageFilter = {};
        // Who reads less than everything names a key of theirs.
        if (!readsAll(who)) {
          const keyId = filterParam(q, "key_id");
          if (!keyId) throw forbidden("read every key's usage (name a key_id of yours)");
          allowed(who, await deps.keys.get(keyId), keyId, readsKey, "read the usage of");
        }
        const keyIdFilter = filterParam(q, "key_id");
        const model = filterParam(q, "model");
        if (keyIdFilter) filter.key_id = keyIdFilter;
        if (model) filter.model = model;
        const since = isoParam(q, "since");
        const until = isoParam(q, "until");
        if (since) filter.since = since;
        if (until) filter.until = until;
        await deps.ledger.flush();
        const groupBy = q.get("group_by");
        if (groupBy !== null) {
          const groups = groupBy
            .split(",")
            .map((g) => g.trim())
            .filter(Boolean);
          const owners = groups.filter((g): g is Owner => (OWNERS as readonly string[]).includes(g));
          const plain = groups.filter((g) => !owners.includes(g as Owner));
          for (const g of plain)
            if (!GROUPS.includes(g as UsageGroup))
              throw invalid(`group_by: each of key, model, day, team, user; got ${JSON.stringify(g)}`, "group_by");
          const [owner, ...more] = owners;
          if (more.length || (owner && plain.includes("key")))
            throw invalid("group_by: at most one of team and user, and not with key", "group_by");
          // By team or user: grouped by key in the store, folded here by each key's team or maker.
          if (owner) {
            const rows = await deps.store.aggregateUsage(filter, ["key", ...(plain as UsageGroup[])]); // each checked in the loop above
            return Response.json({
              data: foldByOwner(rows, new Map((await deps.keys.list()).map((k) => [k.id, k])), owner),
            });
          }
          return Response.json({ data: await deps.store.aggregateUsage(filter, plain as UsageGroup[]) }); // each checked in the loop above
        }
        const page = limitParam(q, DEFAULT_USAGE_PAGE, 10_000);
        const cursor = q.get("cursor");
        if (cursor) filter.before = readCursor(cursor);
        // Newest first; one more than the page says whether another page follows.
        const rows = await deps.store.queryUsage({ ...filter, newestFirst: true, limit: page + 1 });
        const data = rows.slice(0, page);
        const last = data.at(-1);
        return Response.json({
          data,
          next_cursor: rows.length > page && last ? encodeCursor(last.created_at, last.request_id) : null,
        });
      }),
    },
    {
      method: "GET",
      path: "/admin/deployments",
      doc: admin(
        "Every model's deployments: circuit state, failures, latency (this instance's view)",
        ok("One row per deployment.", ref("AdminDeployments")),
      ),
      // Every model's deployments with their circuit (closed, open, half_open), failures and latency.
      handle: guarded(() => Response.json({ data: deps.router.list(deps.now()) })),
    },
    {
      method: "GET",
      path: "/admin/latency",
      doc: admin(
        "Latency and time to first token by model and deployment: p50 and p95 of this instance's last requests",
        ok(
          "One row per model and deployment, busiest first; latency of the requests that succeeded, first token of the streams.",
          ref("AdminLatency"),
        ),
      ),
      handle: guarded(() => Response.json({ window: deps.metrics.recent.capacity, data: deps.metrics.recent.rows() })),
    },
    {
      method: "GET",
      path: "/admin/usage/latency",
      doc: admin(
        "Latency percentiles (p50, p90, p99) of the requests that succeeded, per key, model or deployment, from the ledger",
        ok(
          "One row per group with its bucket counts; percentiles placed within the bucket that holds them.",
          ref("AdminUsageLatency"),
        ),
        {
          parameters: [
            query("by", "Any of `key`, `model`, `deployment`, comma-separated (default `model`).", {
              type: "string",
            }),
            query("key_id", "Only this key's requests.", { type: "string" }),
            query("model", "Only this model's requests.", { type: "string" }),
            query("since", "From this instant (ISO 8601).", { type: "string" }),
            query("until", "Before this instant (ISO 8601).", { type: "string" }),
          ],
        },
      ),
      handle: guarded(async ({ request, who }) => {
        const q = new URL(request.url).searchParams;
        const filter: UsageFilter = {};
        // As `GET /admin/usage`: who reads less than everything names a key of theirs.
        if (!readsAll(who)) {
          const keyId = filterParam(q, "key_id");
          if (!keyId) throw forbidden("read every key's latency (name a key_id of yours)");
          allowed(who, await deps.keys.get(keyId), keyId, readsKey, "read the latency of");
        }
        const keyId = filterParam(q, "key_id");
        const model = filterParam(q, "model");
        const since = isoParam(q, "since");
        const until = isoParam(q, "until");
        if (keyId) filter.key_id = keyId;
        if (model) filter.model = model;
        if (since) filter.since = since;
        if (until) filter.until = until;
        const by = (q.get("by") ?? "model")
          .split(",")
          .map((g) => g.trim())
          .filter(Boolean);
        for (const g of by)
          if (!(LATENCY_GROUPS as readonly string[]).includes(g))
            throw invalid(`by: each of key, model, deployment; got ${JSON.stringify(g)}`, "by");
        await deps.ledger.flush();
        const groups = [...new Set(by)] as LatencyGroup[]; // each checked in the loop above
        return Response.json({
          by: groups,
          bucket_bounds_ms: LATENCY_BOUNDS,
          data: await deps.store.latencyUsage(filter, groups),
        });
      }),
    },
    {
      method: "GET",
      path: "/admin/usage/daily",
      doc: admin(
        "Requests, tokens and cost per UTC day, one zero-filled series per model or key",
        ok("The days of the range and a series per model or key, biggest spender first.", ref("AdminUsageDaily")),
        {
          parameters: [
            query("by", "`model` (default), `key`, `team` or `user`.", {
              type: "string",
              enum: ["model", "key", "team", "user"],
            }),
            ...dayRangeParams(),
          ],
        },
      ),
      handle: guarded(async ({ request, who }) => {
        // Requests, tokens and cost per UTC day, one zero-filled series per model or key.
        if (!readsAll(who)) throw forbidden("read every key's daily usage");
        const q = new URL(request.url).searchParams;
        const asked = q.get("by") ?? "model";
        const owner = (OWNERS as readonly string[]).includes(asked) ? (asked as Owner) : undefined; // checked in this line
        const by = (owner ? "key" : asked) as SeriesBy; // checked just below
        if (!SERIES_BY.includes(by)) throw invalid(`by: model, key, team or user, got ${JSON.stringify(asked)}`, "by");
        const range = seriesRange(q, deps.now());
        await deps.ledger.flush();
        const rows = await deps.store.aggregateUsage({ since: range.since, until: range.until }, ["day", by]);
        // The failed among them, grouped the same way: every grouping's error rate reads the same requests.
        const failed = await deps.store.aggregateUsage({ since: range.since, until: range.until, failed: true }, [
          "day",
          by,
        ]);
        if (!owner) return Response.json({ by, days: range.days, series: toSeries(range.days, rows, by, failed) });
        // A team's or user's series: its keys' rows folded, then drawn as one series each.
        const keys = new Map((await deps.keys.list()).map((k) => [k.id, k]));
        const fold = (list: typeof rows) =>
          foldByOwner(list, keys, owner).map(({ team_id, user_id, ...r }) => ({
            ...r,
            key_id: String((owner === "team" ? team_id : user_id) ?? "(unknown)"),
          }));
        return Response.json({
          by: owner,
          days: range.days,
          series: toSeries(range.days, fold(rows), "key", fold(failed)),
        });
      }),
    },
    {
      method: "GET",
      path: "/admin/guardrails",
      doc: admin(
        "Guardrail detections per policy, category, action and key over a range of UTC days (never a value)",
        ok(
          "One row per policy, category, action, dry run and key, most detections first.",
          ref("AdminGuardrailTotals"),
        ),
        {
          parameters: [...dayRangeParams()],
        },
      ),
      handle: guarded(async ({ request, who }) => {
        // Read from the guardrail rollups, one statement (docs/guardrails.md, "What is recorded").
        if (!readsAll(who)) throw forbidden("read every key's guardrail detections");
        const range = seriesRange(new URL(request.url).searchParams, deps.now());
        const first = range.days[0]!; // seriesRange gives at least one day
        const last = range.days.at(-1)!;
        await deps.ledger.flush();
        return Response.json({
          since: first,
          until: last,
          data: await deps.store.guardrailTotals(first, last),
          // Nothing is ever left out now (the rollups hold every request); kept for older clients.
          truncated: false,
        });
      }),
    },
    {
      method: "GET",
      path: "/admin/requests",
      doc: admin(
        "The request log, newest first, a page at a time (no prompt or reply text)",
        ok("The newest requests, or those before `cursor`.", ref("AdminRequestLog")),
        {
          parameters: [
            query("since", "Only requests finished at or after this instant (ISO 8601).", { type: "string" }),
            query("limit", "At most this many, 1 to 1000 (default 100).", {
              type: "integer",
              minimum: 1,
              maximum: 1000,
            }),
            CURSOR,
          ],
        },
      ),
      handle: guarded(async ({ request, who }) => {
        if (!readsAll(who)) throw forbidden("read the whole request log");
        // The live request log, newest first. A poller asks again from a little before the
        // newest time it has and merges by request id: records shipped late by another
        // instance's journal carry their own (earlier) finish time.
        const q = new URL(request.url).searchParams;
        const since = isoParam(q, "since");
        await deps.ledger.flush();
        const limit = limitParam(q, REQUESTS_PAGE.fallback, REQUESTS_PAGE.max);
        const cursor = q.get("cursor");
        const before = cursor ? readCursor(cursor) : undefined;
        // One more than the page says whether another page follows.
        const rows = await deps.store.queryUsage({
          ...(since ? { since } : {}),
          ...(before ? { before } : {}),
          newestFirst: true,
          limit: limit + 1,
        });
        // Refused requests have no usage record: this instance's are merged in, with their reason.
        const refused = deps.refusals?.list(since, limit + 1, before) ?? [];
        const lines = mergeNewestFirst(rows.map(requestLine), refused.map(refusalLine), limit + 1);
        const data = lines.slice(0, limit);
        const last = data.at(-1);
        return Response.json({
          data,
          next_cursor: lines.length > limit && last ? encodeCursor(last.created_at, last.request_id) : null,
        });
      }),
    },
    {
      method: "GET",
      path: "/admin/models",
      doc: admin(
        "The whole catalog with prices, vendors and protocols",
        ok("Every catalog model.", {
          type: "object",
          required: ["data"],
          properties: {
            data: {
              type: "array",
              items: {
                allOf: [
                  ref("Model"),
                  {
                    type: "object",
                    required: ["vendor", "protocol"],
                    properties: { vendor: { type: "string" }, protocol: { type: "string" } },
                  },
                ],
              },
            },
          },
        }),
      ),
      // The whole catalog with prices (`GET /v1/models` lists only what one key may call).
      handle: guarded(() =>
        Response.json({
          data: deps.catalog.all().map((e) => ({ ...modelEntry(e), vendor: e.owned_by, protocol: e.protocol })),
        }),
      ),
    },
  ];
}
