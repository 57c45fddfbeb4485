import type { Warning } from "@turnpike/providers";
import {
  BLOCK_TYPES,
  CHAT_PART_TYPES,
  ChatServiceTier,
  ChatVerbosity,
  MessagesServiceTier,
  OutputEffort,
  RESPONSES_PART_TYPES,
  ReasoningEffort,
  ResponsesReasoningEffort,
  ThinkingDisplay,
} from "@turnpike/schema";
import { invalid } from "../vocabulary/client-errors";

/**
 * The open rest of a client body on its way to another protocol (docs/protocols.md, "Read set
 * and open rest"). The schema lets a newer client's values and content types through; passthrough
 * forwards them untouched. Before a translation this module decides, per field, what the
 * converters would otherwise meet with types that do not name it: an unknown value of a knob is
 * dropped and named in a warning; unknown content (a block, part or item the model would need)
 * is a 400 naming it, since sending the rest of the turn without it would change what was asked.
 */

/** A knob whose value Turnpike translates: where it is, and the values it knows. */
export interface OpenKnob {
  readonly path: readonly string[];
  readonly known: readonly string[];
}

/** Where a body holds typed content, and which types Turnpike can translate there. */
export interface ContentSite {
  /** The lists of typed objects in this body, each with the path that names it in a message. */
  lists(body: Readonly<Record<string, unknown>>): Iterable<{ at: string; items: readonly unknown[] }>;
  /** Whether Turnpike translates this `type`. */
  knows(type: string): boolean;
  /** What the site's objects are called ("block", "content part", "input item"). */
  noun: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The value at `path`, if every step on the way is an object. */
function at(body: Record<string, unknown>, path: readonly string[]): unknown {
  let node: unknown = body;
  for (const key of path) node = isObject(node) ? node[key] : undefined;
  return node;
}

/** A copy of `obj` without the field at `path` (the objects on the path are copied, nothing else). */
function without(obj: Record<string, unknown>, [key, ...rest]: readonly string[]): Record<string, unknown> {
  const copy = { ...obj };
  if (key === undefined) return copy;
  const inner = copy[key];
  if (rest.length === 0) delete copy[key];
  else if (isObject(inner)) copy[key] = without(inner, rest);
  return copy;
}

/** `body` with each unknown knob value removed, and a warning naming each removal. */
export function dropUnknownKnobs<T extends object>(
  body: T,
  knobs: readonly OpenKnob[],
  target: string,
): { body: T; warnings: Warning[] } {
  let out = body as Record<string, unknown>; // a JSON object body: its fields are read by name
  const warnings: Warning[] = [];
  for (const { path, known } of knobs) {
    const value = at(out, path);
    if (typeof value !== "string" || known.includes(value)) continue;
    out = without(out, path);
    const knownList = known.map((k) => JSON.stringify(k)).join(", ");
    warnings.push({
      param: path.join("."),
      message: `${JSON.stringify(value)} is not a value Turnpike can carry to ${target} upstreams (it knows ${knownList}); it was not sent`,
    });
  }
  return { body: out as T, warnings }; // the same object, with values removed at most
}

/** The first content object whose `type` is unknown: a 400 naming where it is, for a translation. */
export function refuseUnknownContent(body: Readonly<Record<string, unknown>>, site: ContentSite, target: string): void {
  for (const { at, items } of site.lists(body)) {
    items.forEach((item, i) => {
      if (!isObject(item) || typeof item.type !== "string" || site.knows(item.type)) return;
      throw invalid(
        `${at}[${i}].type: the ${site.noun} type ${JSON.stringify(item.type)} is not one Turnpike can translate for ${target} upstreams; it passes through only to an upstream of the client's own format (choose such a model, or leave the ${site.noun} out)`,
        `${at}[${i}].type`,
      );
    });
  }
}

/** `body` without the content objects of unknown type (what a passthrough's own count reads: their text is not counted). */
export function withoutUnknownContent<T extends object>(body: T, site: ContentSite): T {
  const unknown = (item: unknown) => isObject(item) && typeof item.type === "string" && !site.knows(item.type);
  // Nothing to leave out (nearly always): the body itself, read only. Cloning it whole cost a
  // 100,000-value body 30 ms of the event loop.
  let any = false;
  for (const { items } of site.lists(body as Record<string, unknown>)) if (items.some(unknown)) any = true;
  if (!any) return body;
  const copy = structuredClone(body) as Record<string, unknown>; // a JSON body: cloned whole, then pruned in place
  for (const { items } of site.lists(copy)) {
    const list = items as unknown[]; // the list inside the clone: pruned where it is, in one pass
    let kept = 0;
    for (let i = 0; i < list.length; i++) if (!unknown(list[i])) list[kept++] = list[i];
    list.length = kept;
  }
  return copy as T; // the same shape, fewer list items
}

/** Lists of typed objects under `field` of each entry of `list` (e.g. each message's `content`). */
function* nested(
  list: unknown,
  listAt: string,
  field: string,
): Iterable<{ at: string; items: readonly unknown[]; entry: Record<string, unknown> }> {
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) {
    const entry: unknown = list[i];
    if (isObject(entry) && Array.isArray(entry[field]))
      yield { at: `${listAt}[${i}].${field}`, items: entry[field], entry };
  }
}

const knows = (types: readonly string[]) => (t: string) => types.includes(t) || t.endsWith("_tool_result");

/** The messages format: `thinking.display`, `output_config.effort`, `service_tier`; blocks of messages and tool results. */
export const MESSAGES_OPEN = {
  knobs: [
    { path: ["thinking", "display"], known: ThinkingDisplay.known },
    { path: ["output_config", "effort"], known: OutputEffort.known },
    { path: ["service_tier"], known: MessagesServiceTier.known },
  ] satisfies OpenKnob[],
  content: {
    noun: "content block",
    knows: knows(BLOCK_TYPES),
    *lists(body) {
      for (const m of nested(body.messages, "messages", "content")) {
        yield m;
        for (const r of nested(m.items, m.at, "content"))
          if (r.entry.type === "tool_result") yield { at: r.at, items: r.items };
      }
    },
  } satisfies ContentSite,
};

/** The chat format: `service_tier`, `verbosity`, `reasoning_effort`; the parts of user messages. */
export const CHAT_OPEN = {
  knobs: [
    { path: ["service_tier"], known: ChatServiceTier.known },
    { path: ["verbosity"], known: ChatVerbosity.known },
    { path: ["reasoning_effort"], known: ReasoningEffort.known },
  ] satisfies OpenKnob[],
  content: {
    noun: "content part",
    knows: (t) => (CHAT_PART_TYPES as readonly string[]).includes(t),
    *lists(body) {
      for (const m of nested(body.messages, "messages", "content")) if (m.entry.role === "user") yield m;
    },
  } satisfies ContentSite,
};

/**
 * The Responses format: `reasoning.effort`; the parts of its messages and tool outputs. (Input items
 * of a type Turnpike does not read are a vendor's replayed output: formats/responses.ts carries
 * them on passthrough and leaves them out of a translation with a warning.)
 */
export const RESPONSES_OPEN = {
  knobs: [{ path: ["reasoning", "effort"], known: ResponsesReasoningEffort.known }] satisfies OpenKnob[],
  parts: {
    noun: "content part",
    knows: (t) => (RESPONSES_PART_TYPES as readonly string[]).includes(t),
    *lists(body) {
      yield* nested(body.input, "input", "content");
      yield* nested(body.input, "input", "output");
    },
  } satisfies ContentSite,
};
