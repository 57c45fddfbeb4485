/**
 * The request validators: a compiled TypeBox check (compiled once, at module load) plus each
 * format's own rules. The compiled check runs first; messages are only worked out when a
 * body fails, so a valid request costs one `Check` call and a few property reads.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { ChatRequest } from "./chat-request.js";
import { CountTokensRequest } from "./count-tokens.js";
import { EmbeddingsRequest } from "./embeddings.js";
import { explain, joinPath, show, type ValidationIssue } from "./explain.js";
import { isRecord } from "./is-record.js";
import { MessagesRequest } from "./messages-request.js";
import { ResponsesRequest } from "./responses-request.js";
import { GenerateRequest } from "./generate-request.js";

export { MAX_ISSUES, type ValidationIssue } from "./explain.js";

/**
 * What a validator returns: the typed body, or every problem found (at most `MAX_ISSUES`).
 *
 * @example
 * ```ts
 * const r: ValidationResult<ChatRequest> = validateChatRequest(body);
 * if (!r.ok) console.log(r.issues[0]?.message); // "temperature: must be between 0 and 2, got 3"
 * ```
 */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

type Rule = (body: Record<string, unknown>, out: ValidationIssue[]) => void;

/** The two things a validator needs from TypeBox, compiled or interpreted. */
interface Checker {
  Check(value: unknown): boolean;
  FirstError(value: unknown): { path: string; message: string; value: unknown } | undefined;
}

/**
 * Compiles once, at module load. `TypeCompiler` generates code with `new Function`, which a
 * strict Content-Security-Policy or an edge runtime (Cloudflare Workers) refuses; the SDKs
 * import this package there too, so fall back to the interpreted `Value.Check` instead of
 * failing to load.
 */
function compile(schema: TSchema): Checker {
  try {
    const compiled = TypeCompiler.Compile(schema);
    return { Check: (v) => compiled.Check(v), FirstError: (v) => compiled.Errors(v).First() };
  } catch {
    return { Check: (v) => Value.Check(schema, v), FirstError: (v) => Value.Errors(schema, v).First() };
  }
}

function makeValidator<S extends TSchema>(schema: S, rules: Rule[]): (body: unknown) => ValidationResult<Static<S>> {
  const check = compile(schema);
  return (body) => {
    const out: ValidationIssue[] = [];
    const passed = check.Check(body);
    if (!passed) {
      explain(schema, body, "", out);
      if (out.length === 0) out.push(fallbackIssue(check, body));
    }
    if (isRecord(body)) for (const rule of rules) rule(body, out);
    // The check passed (and the rules only narrow further), so the body is a Static<S>.
    return out.length === 0 ? { ok: true, value: body as Static<S> } : { ok: false, issues: out };
  };
}

/** Safety net if the explainer and the compiled check ever disagree: TypeBox's first error. */
function fallbackIssue(check: Checker, body: unknown): ValidationIssue {
  const first = check.FirstError(body);
  const path = (first?.path ?? "")
    .split("/")
    .slice(1)
    .reduce<string>((acc, seg) => {
      const key = seg.replace(/~1/g, "/").replace(/~0/g, "~");
      return joinPath(acc, /^\d+$/.test(key) ? Number(key) : key);
    }, "");
  const rule = first?.message.toLowerCase() ?? "is invalid";
  return { path, message: `${path === "" ? "request body" : path}: ${rule}, got ${show(first?.value)}` };
}

// ── messages format rules (docs/protocols.md §1.2) ────────────────────────────────────────────────

/** Many models reject both: 400 "`temperature` and `top_p` cannot both be specified". */
const temperatureOrTopP: Rule = (body, out) => {
  if (body.temperature !== undefined && body.top_p !== undefined) {
    out.push({
      path: "top_p",
      message: `top_p: cannot be combined with temperature, got temperature ${show(body.temperature)} and top_p ${show(body.top_p)}; set only one`,
    });
  }
};

/** `budget_tokens` counts toward `max_tokens`, so it must be below it. */
const budgetBelowMaxTokens: Rule = (body, out) => {
  const thinking = body.thinking;
  if (!isRecord(thinking) || thinking.type !== "enabled") return;
  const budget = thinking.budget_tokens;
  const max = body.max_tokens;
  if (typeof budget === "number" && typeof max === "number" && Number.isInteger(max) && budget >= max) {
    out.push({
      path: "thinking.budget_tokens",
      message: `thinking.budget_tokens: must be less than max_tokens (${max}), got ${budget}`,
    });
  }
};

/**
 * A mid-conversation system message carries instructions, never a turn's content: text only,
 * so that every upstream can carry it (a chat `system` message, or folded system text).
 */
const systemMessagesHoldText: Rule = (body, out) => {
  const messages = body.messages;
  if (!Array.isArray(messages)) return;
  messages.forEach((m: unknown, i) => {
    if (!isRecord(m) || m.role !== "system" || !Array.isArray(m.content)) return;
    m.content.forEach((b: unknown, j) => {
      if (isRecord(b) && b.type !== "text") {
        out.push({
          path: `messages[${i}].content[${j}].type`,
          message: `messages[${i}].content[${j}].type: a system message holds text blocks only, got ${show(b.type)}`,
        });
      }
    });
  });
};

// ── chat completions rules (docs/protocols.md §2.2) ───────────────────────────────────────────────

/** A frequent mistake when switching from the messages format. */
const noTopLevelSystem: Rule = (body, out) => {
  if (body.system !== undefined) {
    out.push({
      path: "system",
      message: `system: not a chat completions field, got ${show(body.system)}; send the system prompt as the first message, {"role": "system", "content": "…"}`,
    });
  }
};

const streamOptionsNeedStream: Rule = (body, out) => {
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    out.push({
      path: "stream_options",
      message: `stream_options: only allowed when stream is true, got stream ${body.stream === undefined ? "not set" : show(body.stream)}`,
    });
  }
};

const messagesValidator = makeValidator(MessagesRequest, [
  temperatureOrTopP,
  budgetBelowMaxTokens,
  systemMessagesHoldText,
]);
const chatValidator = makeValidator(ChatRequest, [noTopLevelSystem, streamOptionsNeedStream]);
const countTokensValidator = makeValidator(CountTokensRequest, [systemMessagesHoldText]);

/**
 * Validates a `POST /v1/messages` body: the schema plus the format's rules (`max_tokens`
 * required, temperature 0–1, not both temperature and top_p, non-empty text blocks, roles
 * `user`/`assistant`, thinking budget below `max_tokens`).
 *
 * @example
 * ```ts
 * const r = validateMessagesRequest({ model: "alpha-sonnet-4-6", messages: [{ role: "user", content: "Hi" }] });
 * // r.ok === false; r.issues[0].message === "max_tokens: required integer, got nothing"
 * ```
 */
export function validateMessagesRequest(body: unknown): ValidationResult<MessagesRequest> {
  return messagesValidator(body);
}

/**
 * Validates a `POST /v1/chat/completions` body: the schema plus the format's rules
 * (temperature 0–2, no top-level `system`, `stream_options` only with `stream: true`,
 * `n` ≥ 1, at most 4 stop sequences). Unknown fields are allowed.
 *
 * @example
 * ```ts
 * const r = validateChatRequest({ model: "beta-4o", messages: [{ role: "user", content: "Hi" }], temperature: 3 });
 * // r.ok === false; r.issues[0].message === "temperature: must be between 0 and 2, got 3"
 * ```
 */
export function validateChatRequest(body: unknown): ValidationResult<ChatRequest> {
  return chatValidator(body);
}

/**
 * Validates a `POST /v1/messages/count_tokens` body.
 *
 * @example
 * ```ts
 * const r = validateCountTokensRequest({ model: "alpha-sonnet-4-6", messages: [{ role: "user", content: "Hi" }] });
 * if (r.ok) console.log(r.value.messages.length);
 * ```
 */
export function validateCountTokensRequest(body: unknown): ValidationResult<CountTokensRequest> {
  return countTokensValidator(body);
}

/**
 * Joins issues into one line for an error body's `message`.
 *
 * @example
 * ```ts
 * if (!r.ok) throw new Error(formatIssues(r.issues)); // "max_tokens: required integer, got nothing; …"
 * ```
 */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((i) => i.message).join("; ");
}

/**
 * The same readable issues for any other TypeBox schema (e.g. an admin API body, a config
 * file). Use it after your own compiled `Check` failed; `path` names where `value` sits (a config
 * file's `routing`), and prefixes every message.
 *
 * @example
 * ```ts
 * const CreateKey = Type.Object({ name: Type.String({ minLength: 1 }) });
 * explainErrors(CreateKey, {}); // [{ path: "name", message: "name: required string, got nothing" }]
 * ```
 */
export function explainErrors(schema: TSchema, value: unknown, path = ""): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  explain(schema, value, path, out);
  return out;
}

// ── Responses format rules (docs/protocols.md §5) ─────────────────────────────────────────────────

/** `instructions` is the system prompt; a top-level `system` is a mistake from another format. */
const noSystemField: Rule = (body, out) => {
  if (body.system !== undefined) {
    out.push({
      path: "system",
      message: `system: not a Responses field, got ${show(body.system)}; send the system prompt as "instructions"`,
    });
  }
};

const responsesValidator = makeValidator(ResponsesRequest, [noSystemField]);

/**
 * Validates a `POST /v1/responses` body: the schema (a model, an `input` string or list of
 * items, tools, knobs) plus the format's rules. Unknown fields are allowed.
 *
 * @example
 * ```ts
 * const r = validateResponsesRequest({ model: "beta-5", input: "Hi" });
 * if (r.ok) console.log(r.value.input); // "Hi"
 * ```
 */
export function validateResponsesRequest(body: unknown): ValidationResult<ResponsesRequest> {
  return responsesValidator(body);
}

// ── generateContent format rules (docs/protocols.md §6) ────────────────────────────────────────────

/** A part carries one kind of data; an empty part is a mistake the vendor refuses too. */
const partsHoldData: Rule = (body, out) => {
  const contents = body.contents;
  if (!Array.isArray(contents)) return;
  const kinds = [
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
    "thoughtSignature",
  ];
  contents.forEach((c: unknown, i) => {
    if (!isRecord(c) || !Array.isArray(c.parts)) return;
    c.parts.forEach((p: unknown, j: number) => {
      if (isRecord(p) && !kinds.some((k) => p[k] !== undefined)) {
        out.push({
          path: `contents[${i}].parts[${j}]`,
          message: `contents[${i}].parts[${j}]: a part needs one of ${kinds.slice(0, 5).join(", ")}, got ${show(p)}`,
        });
      }
    });
  });
};

const generateValidator = makeValidator(GenerateRequest, [partsHoldData]);

/**
 * Validates a generateContent body (the model is in the path): `contents` of parts, tools,
 * tool config and generation config, plus the format's rules. Unknown fields are allowed.
 *
 * @example
 * ```ts
 * const r = validateGenerateRequest({ contents: [{ role: "user", parts: [{ text: "Hi" }] }] });
 * if (r.ok) console.log(r.value.contents.length); // 1
 * ```
 */
export function validateGenerateRequest(body: unknown): ValidationResult<GenerateRequest> {
  return generateValidator(body);
}

const embeddingsValidator = makeValidator(EmbeddingsRequest, []);

/**
 * Validates a `POST /v1/embeddings` body: a model and an `input` (a string, strings, token ids or
 * arrays of token ids), with optional `dimensions`, `encoding_format`, `user`, `task_type`.
 *
 * @example
 * ```ts
 * const r = validateEmbeddingsRequest({ model: "beta-embedding-3-small", input: ["a", "b"] });
 * if (r.ok) console.log(r.value.input); // ["a", "b"]
 * ```
 */
export function validateEmbeddingsRequest(body: unknown): ValidationResult<EmbeddingsRequest> {
  return embeddingsValidator(body);
}
