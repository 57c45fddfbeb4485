/**
 * Where a translated object came from in the client's own request. A request is refused after
 * translation too (an upstream protocol's converter judges the pivot: an image URL a vendor
 * cannot fetch, a tool result answering no call), and the refusal must name the field the client
 * sent — `input[0].content[1].image_url` of a Responses request — not the pivot's
 * `messages[0].content[1].source.url`. So each client format's converter notes, on the blocks it
 * writes, the client path they were written from and how their fields are named there; the
 * error is renamed on its way out ({@link inClientTerms}). Objects are keyed weakly: a note lives
 * as long as its request.
 *
 * @example
 * ```ts
 * noteOrigin(block, "messages[2].content[0]", { source: "image_url", "source.url": "image_url.url" });
 * clientPath(pivot, "messages[1].content[0].source.url"); // "messages[2].content[0].image_url.url"
 * ```
 */
import { GatewayError } from "./errors.js";

/** A block's field names in the client's terms, by the pivot's (`"source.url"` → `"image_url.url"`). */
export type FieldNames = Readonly<Record<string, string>>;

interface Origin {
  at: string;
  fields: FieldNames | undefined;
  /** Only the object itself maps (an array whose items are renumbered, such as merged turns). */
  whole: boolean;
}

const ORIGINS = new WeakMap<object, Origin>();

/** Notes that `obj` was written from the client's field `at`, its own fields renamed by `fields`. */
export function noteOrigin(obj: object, at: string, fields?: FieldNames, opts: { whole?: boolean } = {}): void {
  ORIGINS.set(obj, { at, fields, whole: opts.whole === true });
}

/** A copy of `from` (the same block, a field changed) comes from where `from` came from. */
export function keepOrigin(copy: object, from: object): void {
  const o = ORIGINS.get(from);
  if (o) ORIGINS.set(copy, o);
}

/**
 * Notes that `obj` was written from `from`, an object of an intermediate request at `at` there:
 * through `from`'s own note when it has one (a Responses request becomes a chat one, then the
 * pivot), else at `at` itself.
 */
export function noteDerived(
  obj: object,
  from: object,
  at: string,
  fields?: FieldNames,
  opts: { whole?: boolean } = {},
): void {
  const o = ORIGINS.get(from);
  if (!o) return noteOrigin(obj, at, fields, opts);
  const composed = fields
    ? Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, rename(o.fields, `.${v}`).slice(1)]))
    : o.fields;
  noteOrigin(obj, o.at, composed, opts);
}

/** `sub` (`""`, `".source.url"`, `".content[2]"`) in the client's names: the longest renamed prefix wins. */
function rename(fields: FieldNames | undefined, sub: string): string {
  if (!fields || sub === "") return sub;
  let best: string | undefined;
  for (const k of Object.keys(fields)) {
    const p = `.${k}`;
    const fits = sub === p || sub.startsWith(`${p}.`) || sub.startsWith(`${p}[`);
    if (fits && (best === undefined || k.length > best.length)) best = k;
  }
  if (best === undefined) return sub;
  const to = fields[best]!; // a key of fields: found above
  return `${to ? `.${to}` : ""}${sub.slice(best.length + 1)}`;
}

const SEGMENT = /([^.[\]]+)|\[(\d+)\]/g;

/** `path` inside `root` (a translated request) as the client named it; unchanged where nothing was noted. */
export function clientPath(root: unknown, path: string): string {
  let node: unknown = root;
  let best: { origin: Origin; end: number } | undefined;
  for (const m of path.matchAll(SEGMENT)) {
    if (typeof node !== "object" || node === null) break;
    const key = m[1] ?? Number(m[2]);
    node = (node as Record<string | number, unknown>)[key]; // an object or array: checked above
    const end = (m.index ?? 0) + m[0].length;
    const origin = typeof node === "object" && node !== null ? ORIGINS.get(node) : undefined;
    if (origin && (!origin.whole || end === path.length)) best = { origin, end };
  }
  if (!best) return path;
  return `${best.origin.at}${rename(best.origin.fields, path.slice(best.end))}`;
}

/** `err`, if a {@link GatewayError} naming a field of `root`, naming the client's field instead. */
export function inClientTerms(err: unknown, root: unknown): unknown {
  if (!(err instanceof GatewayError) || !err.param) return err;
  const param = clientPath(root, err.param);
  if (param === err.param) return err;
  return new GatewayError({
    status: err.status,
    type: err.type,
    ...(err.code !== undefined ? { code: err.code } : {}),
    ...(err.headers !== undefined ? { headers: err.headers } : {}),
    param,
    message: err.message.startsWith(`${err.param}:`) ? `${param}${err.message.slice(err.param.length)}` : err.message,
  });
}
