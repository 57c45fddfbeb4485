import { clientPath, inClientTerms, type Warning } from "@turnpike/providers";
import { invalid } from "../vocabulary/client-errors";
import type { ClientFormat, ClientRequest } from "../formats";
import { PROTOCOLS, type Target, type UpstreamProtocol } from "../protocols";
import type { ReplyContext } from "../protocols/upstream-protocol";
import { derivedFrom } from "../protocols/body-text";
import { CLIENT_BETA_HEADERS } from "../protocols/messages/messages-protocol";
import type { MessagesRequest } from "@turnpike/schema";
import { LARGE_BODY_CHARS, loopTurn } from "../vocabulary/loop-turns";
import type { GuardrailRun } from "../guardrails/run";
import { redactGuarded } from "../guardrails/pivot";
import type { ServiceTier } from "../vocabulary/target";
import { askedTier, serveTier } from "./service-tier";
import type { SignatureStore } from "../vocabulary/signature-store";

/** What this step needs of the gateway (wiring/deps.ts `GatewayDeps` is one). */
export interface PlanDeps {
  /** Tokens of a whole prompt in the pivot format. */
  countPrompt: (request: MessagesRequest) => number;
  signatures: SignatureStore;
}

/** Everything about one upstream call that is decided before it is made. */
export interface Plan {
  /** The validated client request (its format's encoders write the reply). */
  client: ClientRequest;
  target: Target;
  protocol: UpstreamProtocol;
  /** Client format and upstream protocol are the same: the body and the reply pass through. */
  passthrough: boolean;
  stream: boolean;
  /** The upstream request body. */
  body: Record<string, unknown>;
  /** Parameters that could not be carried (sent as `x-turnpike-warning` headers). */
  warnings: Warning[];
  /** What the reply's translator needs. */
  reply: ReplyContext;
  /** The request's guardrails, when a policy applies to it: the reply's placeholders are restored with it. */
  guard?: GuardrailRun | undefined;
  /** The client asked for usage inside the stream. */
  includeUsage: boolean;
  /** Ask the upstream's own count alongside the call (the client wants the input count first). */
  countAlongside: boolean;
  /**
   * The stream's first event must carry the prompt's count and the upstream tells it only at the
   * end: Turnpike counts it, once the call is on its way (execute), while the upstream thinks.
   */
  countFirst: boolean;
  /** The tier the call is sent and billed at (service-tier.ts); undefined: the default tier. */
  serviceTier?: ServiceTier | undefined;
  /** Turnpike's count of the prompt, worked out only if it is needed (once). */
  countPrompt(): number;
  /**
   * The same count, for a large body with a turn of the event loop before it and, where the
   * request is first translated to the pivot to be counted (a passthrough), between the two.
   */
  countPromptInSteps(): Promise<number>;
}

/** A client body as it passes through: the upstream's model id, and no field only Turnpike reads. */
export function passthroughBody(
  body: Readonly<Record<string, unknown>>,
  upstreamModel: string,
): Record<string, unknown> {
  // One copy, and a second only for a body that names Turnpike's own field (rare).
  let out: Record<string, unknown>;
  if (body.turnpike === undefined) out = { ...body, model: upstreamModel };
  else {
    const { turnpike: _dropped, ...rest } = body;
    out = { ...rest, model: upstreamModel };
  }
  // Written upstream from the client's own text, but for what changed (protocols/body-text.ts).
  derivedFrom(out, body);
  return out;
}

/** The output-cap fields of the client formats' bodies (each format names its own). */
const OUTPUT_CAP_FIELDS = ["max_tokens", "max_completion_tokens", "max_output_tokens"] as const;

/** An output cap of 0 or less asks for nothing: a 400 naming the field, before anything is sent. */
function checkOutputCaps(body: Readonly<Record<string, unknown>>): void {
  for (const f of OUTPUT_CAP_FIELDS) {
    const v = body[f];
    if (typeof v === "number" && v <= 0) throw invalid(`${f}: must be at least 1, got ${v}`, f);
  }
}

/**
 * A cap above the model's own is lowered to it, with a warning: coding agents send one large
 * fixed cap (such as 32000) to every model, and refusing it would break them. A thinking budget
 * that would no longer fit under the cap is lowered with it (it must stay below the cap).
 */
function clampOutput(body: Record<string, unknown>, fields: readonly string[], cap: number, model: string): Warning[] {
  const warnings: Warning[] = [];
  for (const f of fields) {
    const v = body[f];
    if (typeof v !== "number" || v <= cap) continue;
    body[f] = cap;
    warnings.push({ param: f, message: `${v} is above ${model}'s output cap; lowered to ${cap}` });
  }
  const thinking = body.thinking;
  if (warnings.length && typeof thinking === "object" && thinking !== null && "budget_tokens" in thinking) {
    const t = thinking as { budget_tokens: unknown }; // an object with the field: checked just above
    if (typeof t.budget_tokens === "number" && t.budget_tokens >= cap) {
      warnings.push({
        param: "thinking.budget_tokens",
        message: `${t.budget_tokens} does not fit under the lowered cap; lowered to ${cap - 1}`,
      });
      body.thinking = { ...t, budget_tokens: cap - 1 };
    }
  }
  return warnings;
}

/** A passthrough's plan: the client's body as it goes, its count of the prompt worked out only if asked. */
class PassthroughPlan implements Plan {
  readonly passthrough = true;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly countAlongside = false;
  readonly countFirst = false;
  serviceTier: ServiceTier | undefined;

  constructor(
    private readonly deps: Pick<PlanDeps, "countPrompt">,
    readonly client: ClientRequest,
    readonly target: Target,
    readonly protocol: UpstreamProtocol,
    readonly body: Record<string, unknown>,
    public warnings: Warning[],
    readonly reply: ReplyContext,
    private readonly size: number,
  ) {
    this.stream = client.stream;
    this.includeUsage = client.includeUsage;
  }

  private counted: number | undefined;
  private pivot: ReturnType<ClientRequest["toPivot"]>["request"] | undefined;

  countPrompt(): number {
    this.counted ??= this.deps.countPrompt(this.pivot ?? this.client.toPivot(this.protocol.id).request);
    this.pivot = undefined;
    return this.counted;
  }

  /**
   * For a body larger than the model's window (attempts.ts): the pivot is made only to be counted,
   * and a large body's translation and count are two steps with a turn of the loop before each
   * (together they held the loop 25-250 ms at 50,000 values), then the pivot is let go.
   */
  async countPromptInSteps(): Promise<number> {
    if (this.counted !== undefined) return this.counted;
    if (this.size > LARGE_BODY_CHARS) await loopTurn();
    this.pivot = this.client.toPivot(this.protocol.id).request;
    if (this.size > LARGE_BODY_CHARS) await loopTurn();
    return this.countPrompt();
  }
}

/**
 * Step 5: the upstream body. Same format and protocol: the client's body with the model id
 * rewritten (passthrough). Otherwise through the pivot: the client's request in the messages
 * format, then in the upstream's protocol, with the warnings of both conversions.
 */
export async function plan(
  deps: PlanDeps,
  format: ClientFormat,
  client: ClientRequest,
  target: Target,
  size = 0,
  guard?: GuardrailRun,
): Promise<Plan> {
  const protocol = PROTOCOLS[target.entry.protocol];
  const stream = client.stream;
  const reply = {
    model: target.entry.id,
    stopSequences: undefined,
    toolNames: undefined,
    signatures: deps.signatures,
    inputTokens: 0,
  };
  const { max_output_tokens: cap, id: model } = target.entry;
  checkOutputCaps(client.body);
  // A request with guardrails goes through the pivot, where its text is read and redacted and its
  // reply restored, even toward its own protocol (docs/guardrails.md).
  if (format.passthroughProtocol === protocol.id && !guard) {
    const body = passthroughBody(client.body, target.entry.upstream_model);
    const warnings = clampOutput(body, OUTPUT_CAP_FIELDS, cap, model);
    protocol.preparePassthrough(body, stream);
    const serviceTier = serveTier(format.id, client.body, target.entry, body, warnings);
    // Needed only if the client leaves before the upstream reports usage, or for a body larger
    // than the model's window: methods (the plan is built per attempt; closures would be cells more).
    const planned = new PassthroughPlan(deps, client, target, protocol, body, warnings, reply, size);
    planned.serviceTier = serviceTier;
    return planned;
  }
  const base = { client, target, protocol, stream, includeUsage: client.includeUsage };
  const pivot = client.toPivot(protocol.id);
  if (guard) pivot.request = await redactGuarded(guard, pivot.request, guard.requestId);
  // The pivot is the messages format: its one cap is `max_tokens`, named as the client named it.
  const request = { ...pivot.request };
  const clamped = clampOutput(request, ["max_tokens"], cap, model);
  const capField = OUTPUT_CAP_FIELDS.find((f) => typeof client.body[f] === "number");
  if (clamped.length) pivot.request = request;
  for (const w of clamped) pivot.warnings.push(w.param === "max_tokens" && capField ? { ...w, param: capField } : w);
  // The translation to the pivot and from it: a large body's two steps, a turn of the loop between.
  if (size > LARGE_BODY_CHARS) await loopTurn();
  const out = await fromPivotInClientTerms(protocol, pivot.request, target, deps);
  // A tier asked for is decided here, for the upstream body as its protocol names it: the
  // converters' generic "not carried" warning gives way to the decision's own.
  let warnings = pivot.warnings.concat(out.warnings);
  let serviceTier: ServiceTier | undefined;
  if (askedTier(format.id, client.body) !== undefined) {
    const decided: Warning[] = [];
    serviceTier = serveTier(format.id, client.body, target.entry, out.body, decided);
    if (serviceTier || decided.length)
      warnings = warnings.filter((w) => w.param !== "service_tier" && w.param !== "serviceTier").concat(decided);
  }
  let counted: number | undefined;
  const countPrompt = () => (counted ??= deps.countPrompt(pivot.request));
  const countPromptInSteps = async () => {
    if (counted === undefined && size > LARGE_BODY_CHARS) await loopTurn();
    return countPrompt();
  };
  // A stream from an upstream that tells the input only at its end: counted before the first
  // byte, since a messages-format client reads it in `message_start` — but not before the call
  // is sent: a large prompt takes milliseconds to count (7 ms for 200 KiB), which the upstream's
  // own wait hides. Read when the reply's translator starts.
  const countFirst = stream && !protocol.inputAtStart;
  return {
    ...base,
    guard,
    passthrough: false,
    body: out.body,
    warnings,
    serviceTier,
    reply: {
      ...reply,
      stopSequences: pivot.request.stop_sequences,
      toolNames: out.toolNames,
      get inputTokens() {
        return countFirst ? countPrompt() : 0;
      },
    },
    countAlongside: stream && format.inputAtStart && !protocol.inputAtStart && protocol.count !== undefined,
    countFirst,
    countPrompt,
    countPromptInSteps,
  };
}

/** The plan with the upstream's own count of the prompt for the reply (a plan may be a class: not spread bare). */
export function withInputTokens(p: Plan, inputTokens: number): Plan {
  return {
    ...p,
    countPrompt: () => p.countPrompt(),
    countPromptInSteps: () => p.countPromptInSteps(),
    reply: { ...p.reply, inputTokens },
  };
}

/** No beta dropped (one frozen list for every messages upstream's request). */
const NONE_DROPPED: Warning[] = Object.freeze([]) as unknown as Warning[];

/**
 * The client's beta names, which only a messages upstream reads (it gets them as sent): toward
 * another protocol they are dropped, and named in `x-turnpike-warning` like any other knob that
 * could not be carried.
 */
export function droppedBetas(headers: Headers, protocol: UpstreamProtocol): Warning[] {
  if (protocol.readsClientBetas) return NONE_DROPPED;
  return CLIENT_BETA_HEADERS.flatMap((h) => {
    const v = headers.get(h);
    return v
      ? [
          {
            param: h,
            message: `${v} is read only by messages upstreams; it was not sent to this ${protocol.id} upstream`,
          },
        ]
      : [];
  });
}

/**
 * The upstream protocol's request from the pivot; a refusal or a warning on the way names the
 * field in the client's own request, not in the pivot (providers' client-paths.ts).
 */
export async function fromPivotInClientTerms(
  protocol: UpstreamProtocol,
  pivot: MessagesRequest,
  target: Target,
  deps: Pick<PlanDeps, "signatures">,
): ReturnType<UpstreamProtocol["fromPivot"]> {
  try {
    const out = await protocol.fromPivot(pivot, target, deps.signatures);
    // Its warnings too: a block or tool it names is named as the client sent it.
    return { ...out, warnings: out.warnings.map((w) => ({ ...w, param: clientPath(pivot, w.param) })) };
  } catch (e) {
    throw inClientTerms(e, pivot);
  }
}
