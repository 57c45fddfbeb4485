import { createHash } from "node:crypto";
import { countTextTokens } from "./count-text-tokens";
import { isObject } from "./json-access";
import { jsonResponse } from "./respond";

/**
 * Embeddings, deterministically: a text's vector is drawn from a generator seeded by a hash of
 * the model and the text, so the same text always gets the same vector and tests can check it.
 * `dimensions` keeps the vector's first values, scaled back to unit length (as shortened vectors
 * of the real models are). Values are float32, so a base64 round trip is exact.
 */

/** The vector length of a model when the request names none: 3072 for the large and gamma models, else 1536. */
export function defaultDimensions(model: string): number {
  return /large|gamma/i.test(model) ? 3072 : 1536;
}

/** The most values any request may ask for. */
const MAX_DIMENSIONS = 3072;

/** A vector of unit length for `text` under `model`, `size` values long. */
export function embedText(model: string, text: string, size: number): number[] {
  const seed = createHash("sha256").update(`${model}\n${text}`).digest();
  // xorshift128, seeded by the hash: fast, and the same on every machine.
  let a = seed.readUInt32LE(0) || 1;
  let b = seed.readUInt32LE(4);
  let c = seed.readUInt32LE(8);
  let d = seed.readUInt32LE(12);
  const raw: number[] = [];
  for (let i = 0; i < size; i++) {
    let t = a ^ (a << 11);
    a = b;
    b = c;
    c = d;
    d = (d ^ (d >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    t = d / 0x1_0000_0000;
    raw.push(t * 2 - 1);
  }
  const norm = Math.sqrt(raw.reduce((s, x) => s + x * x, 0)) || 1;
  return raw.map((x) => Math.fround(x / norm));
}

type Reply = { status: number; body: string };

const bad = (message: string): Reply => ({
  status: 400,
  body: JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code: null } }),
});
const badGenerate = (message: string): Reply => ({
  status: 400,
  body: JSON.stringify({ error: { code: 400, message, status: "INVALID_ARGUMENT" } }),
});

function sizeOf(asked: unknown, model: string): number | string {
  if (asked === undefined || asked === null) return defaultDimensions(model);
  if (typeof asked !== "number" || !Number.isInteger(asked) || asked < 1 || asked > MAX_DIMENSIONS)
    return `dimensions must be an integer from 1 to ${MAX_DIMENSIONS}`;
  return asked;
}

/** The chat-completions protocol's `POST /v1/embeddings` (texts or token ids; floats or base64). */
export function chatEmbeddings(body: unknown): Reply {
  if (!isObject(body) || typeof body.model !== "string") return bad("you must provide a model parameter");
  const model = body.model;
  const input = body.input;
  const items: unknown[] =
    typeof input === "string"
      ? [input]
      : Array.isArray(input) && input.every((t) => typeof t === "number")
        ? [input]
        : Array.isArray(input)
          ? input
          : [];
  if (items.length === 0) return bad("'input' is a required property");
  const size = sizeOf(body.dimensions, model);
  if (typeof size === "string") return bad(size);
  let tokens = 0;
  const data: { object: string; index: number; embedding: number[] | string }[] = [];
  for (const [index, item] of items.entries()) {
    let text: string;
    if (typeof item === "string" && item !== "") {
      text = item;
      tokens += countTextTokens(item);
    } else if (Array.isArray(item) && item.length > 0 && item.every((t) => Number.isInteger(t))) {
      // Token ids are embedded as the text of their ids: the same ids, the same vector.
      text = `tokens:${item.join(",")}`;
      tokens += item.length;
    } else return bad(`'$.input' is invalid at index ${index}`);
    const v = embedText(model, text, size);
    data.push({
      object: "embedding",
      index,
      embedding: body.encoding_format === "base64" ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v,
    });
  }
  return {
    status: 200,
    body: JSON.stringify({ object: "list", data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } }),
  };
}

/** The text of one generateContent `content`, or undefined when it has none. */
function contentText(content: unknown): string | undefined {
  if (!isObject(content) || !Array.isArray(content.parts)) return undefined;
  const text = content.parts.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("");
  return text === "" ? undefined : text;
}

/** One generateContent embedding: its vector, or why not. */
function generateOne(model: string, req: unknown): number[] | string {
  if (!isObject(req)) return "Invalid JSON payload received.";
  const text = contentText(req.content);
  if (text === undefined) return "* EmbedContentRequest.content: contents is not specified";
  const size = sizeOf(req.outputDimensionality, model);
  if (typeof size === "string") return `outputDimensionality: ${size}`;
  // The task type is part of what the vector is for: a query and a document of the same text differ.
  const task = typeof req.taskType === "string" && req.taskType !== "TASK_TYPE_UNSPECIFIED" ? `${req.taskType}\n` : "";
  return embedText(model, task + text, size);
}

/** `:embedContent` (one `content`) and `:batchEmbedContents` (`requests`). */
export function generateEmbeddings(model: string, batch: boolean, body: unknown): Reply {
  if (!batch) {
    const v = generateOne(model, body);
    return typeof v === "string" ? badGenerate(v) : { status: 200, body: JSON.stringify({ embedding: { values: v } }) };
  }
  if (!isObject(body) || !Array.isArray(body.requests) || body.requests.length === 0)
    return badGenerate("* BatchEmbedContentsRequest.requests: requests is not specified");
  const embeddings: { values: number[] }[] = [];
  for (const r of body.requests) {
    const v = generateOne(model, r);
    if (typeof v === "string") return badGenerate(v);
    embeddings.push({ values: v });
  }
  return { status: 200, body: JSON.stringify({ embeddings }) };
}

/** The reply as a response with the vendor's headers. */
export function embedResponse(r: Reply, headers: Record<string, string>): Response {
  return jsonResponse(r.status, r.body, headers);
}
