import { GatewayError } from "@turnpike/providers";
import { invalid } from "../vocabulary/client-errors";
import { checkDepth } from "../http/json-depth";
import { keepText } from "../protocols/body-text";
import { mightExceed, takeCensusOffThread } from "../http/json-census";

/**
 * How deep a request body's JSON may nest. Real requests stay far below it (a tool's schema
 * nests a few levels per property); a body nested thousands deep exists only to overflow the
 * stack of whatever walks it later (the token counter, the converters) and stall every request.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Most JSON values one request body may hold (`TURNPIKE_MAX_BODY_VALUES`): what bounds the event
 * loop's work on one body, which grows with its values, not its bytes (http/json-census.ts).
 * 50,000 values is some 12,000 conversation turns of text (8,000 of text blocks), far more than
 * a model's context holds; a large image or document is one value however long. At 100,000 the
 * longest single step of a body's pipeline (the simulator's count, a translation) still held the
 * loop 40–90 ms on the loaded 2-core test machine, with turns of the loop between the steps.
 */
export const DEFAULT_MAX_BODY_VALUES = 50_000;

/** 1 MiB: `TURNPIKE_MAX_BODY_MB` is given in these. */
export const MIB = 1024 * 1024;

/** The request body as JSON; malformed JSON or a non-object is a 400 that says what was wrong. */
export async function readJsonObject(
  request: Request,
  maxBytes: number,
  maxValues = DEFAULT_MAX_BODY_VALUES,
): Promise<Record<string, unknown>> {
  return (await readJsonBody(request, maxBytes, maxValues)).value;
}

/** A body of more JSON values than the limit: 413 in the caller's format, like a body over the byte limit. */
export function tooManyValues(maxValues: number, values: number): GatewayError {
  return new GatewayError({
    status: 413,
    type: "request_too_large",
    code: "request_too_large",
    message: `Request body holds ${values} JSON values; this gateway takes at most ${maxValues} in one body (TURNPIKE_MAX_BODY_VALUES).`,
  });
}

/**
 * Parses `text` as JSON within the limits, holding the event loop only for a body within them:
 * one that might hold more than `maxValues` values is first counted on a worker thread
 * (http/json-census.ts), and refused if it holds too many values (413), is cut short or nests too
 * deep (400).
 */
export async function parseJsonWithin(text: string, maxValues: number): Promise<unknown> {
  if (mightExceed(text, maxValues)) {
    const census = await takeCensusOffThread(text, MAX_JSON_DEPTH);
    if (census.notJson !== undefined) throw invalid(`Request body is not valid JSON: ${census.notJson}.`);
    if (census.tooDeep) throw invalid(census.tooDeep.message, census.tooDeep.param);
    if (census.values > maxValues) throw tooManyValues(maxValues, census.values);
  }
  return parseJsonNow(text);
}

/** {@link parseJsonWithin} for a text that cannot hold more values than the limit ({@link mightExceed} false): at once. */
function parseJsonNow(text: string): unknown {
  // Within the limits: parsed here, a malformed body refused as any other.
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw invalid(`Request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}.`);
  }
  checkDepth(parsed, MAX_JSON_DEPTH);
  return parsed;
}

/** A body over the limit: 413 in the caller's format (the format's renderer picks the envelope). */
export function bodyTooLarge(maxBytes: number, received?: number): GatewayError {
  const got = received !== undefined ? ` (this one declares ${received} bytes)` : "";
  return new GatewayError({
    status: 413,
    type: "request_too_large",
    code: "request_too_large",
    message: `Request body is larger than this gateway's limit of ${maxBytes} bytes (TURNPIKE_MAX_BODY_MB)${got}.`,
  });
}

/** Made once: a regular expression literal is a new object each time it is evaluated. */
const DIGITS = /^\d+$/;

/**
 * The body's bytes, read chunk by chunk and given up the moment they pass `maxBytes`: an
 * oversized body is refused without being held (a declared length over the limit is refused
 * before a byte is read), so memory per request stays near its own size.
 */
export function readBodyText(request: Request, maxBytes: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) return Promise.reject(bodyTooLarge(maxBytes, Number(declared)));
  // A declared length within the limit bounds the body already (HTTP framing ends it there): the
  // runtime's own read is the fast path, its promise handed on as it is (no async frame around it).
  // Only a body of unknown length is read chunk by chunk.
  if (declared !== null && DIGITS.test(declared)) return request.text();
  return readChunks(request, maxBytes);
}

async function readChunks(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => {});
      throw bodyTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0]) return new TextDecoder().decode(chunks[0]);
  const whole = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    whole.set(c, at);
    at += c.byteLength;
  }
  chunks.length = 0;
  return new TextDecoder().decode(whole);
}

/** The body as JSON, with its size in characters (a cheap input-token estimate for admission). */
export async function readJsonBody(
  request: Request,
  maxBytes: number,
  maxValues = DEFAULT_MAX_BODY_VALUES,
): Promise<JsonBody> {
  return jsonBody(await readBodyText(request, maxBytes), maxValues);
}

/** A request body read as a JSON object, and its size in characters. */
export interface JsonBody {
  value: Record<string, unknown>;
  size: number;
}

/**
 * A body's text as a JSON object (see {@link readJsonBody}): at once for a body within the value
 * limit by its length (no promise), else once counted off the thread.
 */
export function jsonBody(text: string, maxValues = DEFAULT_MAX_BODY_VALUES): JsonBody | Promise<JsonBody> {
  if (text.trim() === "") throw invalid("Request body is empty: expected a JSON object.");
  if (mightExceed(text, maxValues)) return parseJsonWithin(text, maxValues).then((parsed) => objectBody(parsed, text));
  return objectBody(parseJsonNow(text), text);
}

function objectBody(parsed: unknown, text: string): JsonBody {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw invalid(
      `Request body must be a JSON object, got ${Array.isArray(parsed) ? "an array" : typeof parsed === "object" ? "null" : typeof parsed}.`,
    );
  }
  keepText(parsed, text);
  return { value: parsed as Record<string, unknown>, size: text.length }; // a non-null, non-array object: checked just above
}
