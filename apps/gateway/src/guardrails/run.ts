import type { GuardrailNote } from "../storage/store";
import { detect, type Span } from "./detectors";
import { type Action, type Policy, STRENGTH, type Surface } from "./policy";

/** A request refused by a policy: the policy and the category, never the value. */
export class GuardrailBlock extends Error {
  constructor(
    readonly policy: string,
    readonly category: string,
    /** What held the value: the client's request, or the model's reply. */
    where: "request" | "reply" = "request",
  ) {
    super(`blocked by guardrail policy "${policy}": the ${where} holds a value of category "${category}"`);
  }
}

/** What the guardrails did on one request, for the ledger, the metrics and the log (never a value). */
export interface GuardrailSummary {
  /** The policies that found something. */
  policies: string[];
  /** The categories found, each once. */
  categories: string[];
  /** The strongest action taken (`log` when only counted; a dry run reports what it would have done). */
  action: Action;
  dry_run: boolean;
  /** Detections by policy, category and action (the action a dry-run policy would have taken). */
  counts: { policy: string; category: string; action: Action; dry_run: boolean; n: number }[];
}

/** A summary as the usage record keeps it. */
export function guardrailNote(s: GuardrailSummary): GuardrailNote {
  return { policies: s.policies, categories: s.categories, action: s.action, dry_run: s.dry_run, detections: s.counts };
}

/** A placeholder as written: `[EMAIL_1]`. */
const PLACEHOLDER = /\[[A-Z][A-Z0-9_]*_\d+\]/g;

/** The placeholder of a label: `[EMAIL_1]`, `[NATIONAL_ID_2]`, `[EMPLOYEE_ID_1]`. */
const tag = (label: string) => label.toUpperCase();

/**
 * One request's guardrails: the redaction of its prompt and the restoration of its reply. The
 * mapping from placeholders back to values lives only here, for the request (docs/guardrails.md);
 * it is never logged or stored. The same value gets the same placeholder everywhere in the
 * request, so a conversation's turns keep referring to one thing.
 */
export class GuardrailRun {
  /** Value → its placeholder (redacted values only). */
  private readonly byValue = new Map<string, string>();
  /** Placeholder → value. */
  readonly restore = new Map<string, string>();
  private readonly perLabel = new Map<string, number>();
  private readonly counts = new Map<
    string,
    { policy: string; category: string; action: Action; dry_run: boolean; n: number }
  >();
  /** The longest placeholder made: a streamed reply holds back at most this many characters. */
  longest = 0;

  /** Some policy asks an external hook (the redaction then waits for it). */
  readonly hooked: boolean;

  /**
   * The external hooks' answers, by a digest of the policy and the texts asked about: another
   * attempt of the request (a retry, a fallback) reuses them, so a hook is asked once per request.
   */
  readonly hookAnswers = new Map<string, Promise<unknown>>();

  /** The hooks' answers so far, settled, as JSON (kept with a batch line); undefined when none was asked. */
  async keptHookAnswers(): Promise<Record<string, unknown> | undefined> {
    if (!this.hookAnswers.size) return undefined;
    const out: Record<string, unknown> = {};
    for (const [id, answer] of this.hookAnswers) out[id] = await answer;
    return out;
  }

  /** Answers kept by {@link keptHookAnswers} from an earlier run of the same texts: read instead of asking again. */
  adoptHookAnswers(kept: Record<string, unknown>): void {
    for (const [id, answer] of Object.entries(kept)) this.hookAnswers.set(id, Promise.resolve(answer));
  }

  constructor(
    readonly policies: readonly Policy[],
    /** The request's id, sent to external hooks. */
    readonly requestId = "",
  ) {
    this.hooked = policies.some((p) => p.hook !== undefined);
    this.readsReply = policies.some((p) => p.applyTo.has("reply"));
  }

  /** Some policy reads what the model writes (the `reply` surface). */
  readonly readsReply: boolean;

  /** Whether any policy looks at `surface`. */
  covers(surface: Surface): boolean {
    return this.policies.some((p) => p.applyTo.has(surface));
  }

  /**
   * The text with each value the policies found replaced (redact: a numbered placeholder that the
   * reply restores; mask: the category's tag, never restored); counts every detection; throws
   * GuardrailBlock for a value a blocking policy found (a dry-run policy only counts).
   * `restorable: false` (embeddings input, the model's reply): nothing will be restored, so
   * `redact` acts as `mask`. `quiet`: neither counted nor blocked (a stored copy of what was
   * already read).
   */
  text(
    text: string,
    surface: Surface,
    hooked?: ReadonlyMap<Policy, Span[]>,
    opts: { restorable?: boolean; quiet?: boolean } = {},
  ): string {
    if (!text) return text;
    return this.act(text, this.find(text, surface, hooked), surface, opts, text.length);
  }

  /**
   * A streamed reply's next piece (the `reply` surface): the text up to `want` (moved back to the
   * start of any value found across it), what the policies find in it masked. The values are
   * found in the whole of `text`, so one still growing past the cut is not read in halves.
   */
  replyPiece(text: string, want: number): { text: string; cut: number } {
    const found = this.find(text, "reply");
    let cut = want;
    for (let moved = true; moved; ) {
      moved = false;
      for (const [, spans] of found)
        for (const s of spans)
          if (s.start < cut && cut < s.end) {
            cut = s.start;
            moved = true;
          }
    }
    const before = found.map(([p, spans]) => [p, spans.filter((s) => s.end <= cut)] as const);
    return { cut, text: this.act(text, before, "reply", { restorable: false }, cut) };
  }

  /** What each policy that looks at `surface` finds in `text` (its detectors' and its hook's spans). */
  private find(text: string, surface: Surface, hooked?: ReadonlyMap<Policy, Span[]>): (readonly [Policy, Span[]])[] {
    const out: (readonly [Policy, Span[]])[] = [];
    for (const p of this.policies) {
      if (!p.applyTo.has(surface)) continue;
      const own = detect(text, p.detectors);
      const extra = hooked?.get(p);
      out.push([p, extra?.length ? own.concat(extra).sort((a, b) => a.start - b.start) : own]);
    }
    return out;
  }

  /** `text` up to `end` with what the policies found acted on: counted, blocked, masked or redacted. */
  private act(
    text: string,
    found: readonly (readonly [Policy, Span[]])[],
    surface: Surface,
    opts: { restorable?: boolean; quiet?: boolean },
    end: number,
  ): string {
    // Each span with the strongest action any live policy takes on it.
    let spans: (Span & { action: Action })[] | undefined;
    for (const [p, list] of found) {
      if (!list.length) continue;
      if (!opts.quiet) for (const s of list) this.count(p, s.label);
      if (p.dryRun) continue;
      if (p.action === "block") {
        if (opts.quiet) continue;
        throw new GuardrailBlock(p.name, list[0]!.label, surface === "reply" ? "reply" : "request");
      }
      if (p.action === "log") continue;
      spans = merge(spans, list, opts.restorable === false ? "mask" : p.action);
    }
    if (!spans) return end === text.length ? text : text.slice(0, end);
    let out = "";
    let at = 0;
    for (const s of spans) {
      out += text.slice(at, s.start);
      const value = text.slice(s.start, s.end);
      out += s.action === "mask" ? `[${tag(s.label)}]` : this.placeholder(value, s.label);
      at = s.end;
    }
    return out + text.slice(at, end);
  }

  /**
   * Placeholders already in the request (a stored conversation it continues holds those of an
   * earlier request, whose values are gone): new ones are numbered past them, never the same.
   */
  reserve(text: string): void {
    if (!text.includes("[")) return;
    for (const m of text.matchAll(PLACEHOLDER)) this.reserved.add(m[0]);
  }
  private readonly reserved = new Set<string>();
  /** The request was read for its placeholders already (the first attempt's plan). */
  reservedRead = false;

  private placeholder(value: string, label: string): string {
    const known = this.byValue.get(value);
    if (known) return known;
    let n = this.perLabel.get(label) ?? 0;
    let ph: string;
    do ph = `[${tag(label)}_${++n}]`;
    while (this.reserved.has(ph));
    this.perLabel.set(label, n);
    this.byValue.set(value, ph);
    this.restore.set(ph, value);
    if (ph.length > this.longest) this.longest = ph.length;
    return ph;
  }

  /**
   * Starts another reading of the same request (the plan of another attempt: a retry, a
   * fallback): what it finds is counted anew, so a request tried three times counts its values
   * once. The placeholders stay: a value keeps its placeholder in every attempt.
   */
  restart(): void {
    this.counts.clear();
  }

  /** Counts a finding that names no span (an external hook's block or failure). */
  count(p: Policy, category: string) {
    const k = `${p.name}\u0000${category}`;
    const c = this.counts.get(k);
    if (c) c.n++;
    else this.counts.set(k, { policy: p.name, category, action: p.action, dry_run: p.dryRun, n: 1 });
  }

  /** Every placeholder of this request in `text` replaced by its value (`json`: escaped for a JSON string). */
  restoreText(text: string, json = false): string {
    if (!this.restore.size || !text.includes("[")) return text;
    return text.replace(PLACEHOLDER, (ph) => {
      const v = this.restore.get(ph);
      if (v === undefined) return ph;
      return json ? JSON.stringify(v).slice(1, -1) : v;
    });
  }

  /** What was found, or undefined when nothing was. */
  summary(): GuardrailSummary | undefined {
    if (!this.counts.size) return undefined;
    const counts = [...this.counts.values()];
    const live = counts.filter((c) => !c.dry_run);
    const strongest = (cs: typeof counts) =>
      cs.reduce<Action>((a, c) => (STRENGTH[c.action] > STRENGTH[a] ? c.action : a), "log");
    return {
      policies: [...new Set(counts.map((c) => c.policy))],
      categories: [...new Set(counts.map((c) => c.category))],
      action: live.length ? strongest(live) : strongest(counts),
      dry_run: live.length === 0,
      counts,
    };
  }
}

/** The spans of two policies together: where they overlap, the stronger action's span is kept. */
function merge(
  into: (Span & { action: Action })[] | undefined,
  found: Span[],
  action: Action,
): (Span & { action: Action })[] {
  const all = (into ?? []).concat(found.map((s) => ({ ...s, action })));
  all.sort((a, b) => a.start - b.start || STRENGTH[b.action] - STRENGTH[a.action] || b.end - a.end);
  const kept: (Span & { action: Action })[] = [];
  for (const s of all) {
    const last = kept.at(-1);
    if (last && s.start < last.end) {
      if (STRENGTH[s.action] > STRENGTH[last.action]) last.action = s.action;
      if (s.end > last.end) last.end = s.end;
      continue;
    }
    kept.push({ ...s });
  }
  return kept;
}
