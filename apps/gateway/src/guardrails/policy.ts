import type { CountryCode } from "libphonenumber-js/max";
import { CATEGORIES, type Category, DEFAULT_PHONE_REGIONS, type DetectorSet, wordsRegex } from "./detectors";

/** What a policy does with a value it finds (docs/guardrails.md). */
export const ACTIONS = ["redact", "mask", "block", "log"] as const;
export type Action = (typeof ACTIONS)[number];

/** Where a policy looks. `prompt`: system and message text; `tools`: tool definitions, calls' arguments and results; `reply`: the model's output; `mcp`: MCP tool arguments and results. */
export const SURFACES = ["prompt", "reply", "tools", "mcp"] as const;
export type Surface = (typeof SURFACES)[number];

/** The external check a policy may call on each text (an HTTP endpoint). */
export interface HookConfig {
  url: string;
  timeoutMs: number;
  /** What a failed or late hook means: let the text pass, or refuse the request. */
  onError: "allow" | "block";
}

/** A policy as the gateway runs it: its detectors compiled once, at start. */
export interface Policy {
  name: string;
  detectors: DetectorSet;
  action: Action;
  applyTo: ReadonlySet<Surface>;
  /** Reports what the policy would do (counted, logged) without changing the request. */
  dryRun: boolean;
  hook: HookConfig | undefined;
}

/** The `guardrails:` section of the config file, as read. */
export interface GuardrailsConfig {
  policies: ReadonlyMap<string, Policy>;
  /** The policies of every key and team that name none. */
  defaults: readonly string[];
}

export const NO_GUARDRAILS: GuardrailsConfig = { policies: new Map(), defaults: [] };

/** The strength of each action: where policies disagree on a value, the stronger one applies. */
export const STRENGTH: Record<Action, number> = { log: 0, redact: 1, mask: 2, block: 3 };

/** Labels a custom pattern may have: they name placeholders, metric labels and ledger fields. */
export const LABEL = /^[a-z][a-z0-9_]{0,31}$/;

interface RawPolicy {
  detect?: unknown;
  patterns?: unknown;
  words?: unknown;
  action?: unknown;
  apply_to?: unknown;
  dry_run?: unknown;
  phone_regions?: unknown;
  hook?: unknown;
}

const POLICY_FIELDS = ["detect", "patterns", "words", "action", "apply_to", "dry_run", "phone_regions", "hook"];
const HOOK_FIELDS = ["url", "timeout_ms", "on_error"];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Reads the config file's `guardrails:` section into compiled policies, every mistake named with
 * its path (`problems`), so start-up refuses a policy it could not run as written.
 */
export function parseGuardrails(raw: unknown, problems: string[]): GuardrailsConfig {
  if (raw === undefined) return NO_GUARDRAILS;
  if (!isRecord(raw)) {
    problems.push("guardrails: must be an object with `policies` and `default`");
    return NO_GUARDRAILS;
  }
  for (const k of Object.keys(raw))
    if (k !== "policies" && k !== "default") problems.push(`guardrails.${k}: unknown field (known: policies, default)`);
  const policies = new Map<string, Policy>();
  const rawPolicies = raw.policies ?? {};
  if (!isRecord(rawPolicies)) problems.push("guardrails.policies: must be an object of named policies");
  else
    for (const [name, p] of Object.entries(rawPolicies)) {
      const at = `guardrails.policies.${name}`;
      if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
        problems.push(`${at}: a policy name is 1 to 64 letters, digits, '_', '.' or '-'`);
        continue;
      }
      const policy = readPolicy(name, p, at, problems);
      if (policy) policies.set(name, policy);
    }
  const defaults: string[] = [];
  if (raw.default !== undefined) {
    if (!Array.isArray(raw.default) || raw.default.some((d) => typeof d !== "string"))
      problems.push("guardrails.default: must be a list of policy names");
    else
      for (const d of raw.default as string[]) {
        if (!policies.has(d)) problems.push(`guardrails.default: no policy named ${JSON.stringify(d)}`);
        else defaults.push(d);
      }
  }
  return { policies, defaults };
}

function readPolicy(name: string, raw: unknown, at: string, problems: string[]): Policy | undefined {
  if (!isRecord(raw)) {
    problems.push(`${at}: must be an object`);
    return undefined;
  }
  const p = raw as RawPolicy;
  const before = problems.length;
  for (const k of Object.keys(raw))
    if (!POLICY_FIELDS.includes(k)) problems.push(`${at}.${k}: unknown field (known: ${POLICY_FIELDS.join(", ")})`);
  const categories = new Set<Category>();
  if (p.detect !== undefined) {
    if (!Array.isArray(p.detect)) problems.push(`${at}.detect: must be a list of categories`);
    else
      for (const c of p.detect) {
        if (CATEGORIES.includes(c as Category)) categories.add(c as Category);
        else problems.push(`${at}.detect: ${JSON.stringify(c)} is not a category (known: ${CATEGORIES.join(", ")})`);
      }
  }
  const patterns: [string, RegExp][] = [];
  if (p.patterns !== undefined) {
    if (!isRecord(p.patterns)) problems.push(`${at}.patterns: must be an object of label: regex`);
    else
      for (const [label, source] of Object.entries(p.patterns)) {
        if (!LABEL.test(label) || (CATEGORIES as readonly string[]).includes(label) || label === "word") {
          problems.push(
            `${at}.patterns.${label}: a label is 1 to 32 lower-case letters, digits or '_', starting with a letter, and not a category's name`,
          );
          continue;
        }
        try {
          if (typeof source !== "string" || !source) throw new Error("must be a non-empty string");
          const re = new RegExp(source, "gu");
          if (re.test("")) throw new Error("matches the empty text");
          patterns.push([label, re]);
        } catch (e) {
          problems.push(`${at}.patterns.${label}: not a usable regular expression: ${(e as Error).message}`);
        }
      }
  }
  let words: RegExp | undefined;
  if (p.words !== undefined) {
    if (!Array.isArray(p.words) || p.words.some((w) => typeof w !== "string" || !w.trim()))
      problems.push(`${at}.words: must be a list of non-empty strings`);
    else words = wordsRegex(p.words as string[]);
  }
  const action = p.action ?? "redact";
  if (!ACTIONS.includes(action as Action))
    problems.push(`${at}.action: must be one of ${ACTIONS.join(", ")}, got ${JSON.stringify(action)}`);
  const applyTo = new Set<Surface>(SURFACES);
  if (p.apply_to !== undefined) {
    applyTo.clear();
    if (!Array.isArray(p.apply_to)) problems.push(`${at}.apply_to: must be a list of ${SURFACES.join(", ")}`);
    else
      for (const s of p.apply_to) {
        if (SURFACES.includes(s as Surface)) applyTo.add(s as Surface);
        else problems.push(`${at}.apply_to: ${JSON.stringify(s)} is not one of ${SURFACES.join(", ")}`);
      }
  }
  if (p.dry_run !== undefined && typeof p.dry_run !== "boolean") problems.push(`${at}.dry_run: must be true or false`);
  let phoneRegions: readonly CountryCode[] = DEFAULT_PHONE_REGIONS;
  if (p.phone_regions !== undefined) {
    if (!Array.isArray(p.phone_regions) || p.phone_regions.some((r) => typeof r !== "string" || !/^[A-Z]{2}$/.test(r)))
      problems.push(`${at}.phone_regions: must be a list of two-letter region codes (US, GB, DE, …)`);
    else phoneRegions = p.phone_regions as CountryCode[];
  }
  let hook: HookConfig | undefined;
  if (p.hook !== undefined) {
    if (!isRecord(p.hook)) problems.push(`${at}.hook: must be an object with url, timeout_ms, on_error`);
    else {
      for (const k of Object.keys(p.hook))
        if (!HOOK_FIELDS.includes(k))
          problems.push(`${at}.hook.${k}: unknown field (known: ${HOOK_FIELDS.join(", ")})`);
      const { url, timeout_ms = 1000, on_error = "allow" } = p.hook;
      if (typeof url !== "string" || !/^https?:\/\//.test(url)) problems.push(`${at}.hook.url: must be an http(s) URL`);
      if (typeof timeout_ms !== "number" || !Number.isInteger(timeout_ms) || timeout_ms < 1 || timeout_ms > 60_000)
        problems.push(`${at}.hook.timeout_ms: must be a whole number from 1 to 60000`);
      if (on_error !== "allow" && on_error !== "block")
        problems.push(`${at}.hook.on_error: must be allow or block, got ${JSON.stringify(on_error)}`);
      hook = { url: url as string, timeoutMs: timeout_ms as number, onError: on_error as "allow" | "block" };
    }
  }
  if (!categories.size && !patterns.length && !words && !hook)
    problems.push(`${at}: detects nothing (give detect, patterns, words or hook)`);
  if (problems.length > before) return undefined;
  return {
    name,
    detectors: { categories, patterns, words, phoneRegions },
    action: action as Action,
    applyTo,
    dryRun: p.dry_run === true,
    hook,
  };
}

/**
 * The policies a key runs: its team's and its own (a key adds policies to its team's, it never
 * removes one), or the config's defaults when neither names any. Unknown names are ignored
 * (refused when the key or team is written).
 */
export function policiesFor(
  config: GuardrailsConfig,
  key: { guardrails?: readonly string[] | null; team?: { guardrails?: readonly string[] | null } | undefined },
): Policy[] {
  const names = new Set<string>([...(key.team?.guardrails ?? []), ...(key.guardrails ?? [])]);
  if (!names.size) for (const d of config.defaults) names.add(d);
  const out: Policy[] = [];
  for (const n of names) {
    const p = config.policies.get(n);
    if (p) out.push(p);
  }
  return out;
}

/** What {@link keyPolicies} made for a key record, and against which configuration. */
const compiled = new WeakMap<object, { config: GuardrailsConfig; policies: readonly Policy[] | undefined }>();

/**
 * {@link policiesFor}, made once per key record rather than per request (issue 47: a feature a
 * request does not use costs it nothing): undefined when the key runs no policy, so its requests
 * carry no guardrail step at all. A key's change is a new record (keys/key-directory.ts), and a
 * team's a new effective key (teams/team-directory.ts), so either is made anew; the policies are
 * the configuration's, read at start.
 */
export function keyPolicies(
  config: GuardrailsConfig,
  key: { guardrails?: readonly string[] | null; team?: { guardrails?: readonly string[] | null } | undefined },
): readonly Policy[] | undefined {
  if (!config.policies.size) return undefined;
  const hit = compiled.get(key);
  if (hit && hit.config === config) return hit.policies;
  const found = policiesFor(config, key);
  const policies = found.length ? found : undefined;
  compiled.set(key, { config, policies });
  return policies;
}
