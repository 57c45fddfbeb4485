/** `POST /v1/embeddings` as the gateway answers it: one deterministic unit vector per input. */
import type { EmbeddingsRequest, EmbeddingsResponse } from "@turnpike/schema";
import { estimateTokens } from "./estimate-tokens.js";

/**
 * A unit vector for `text`, the same every time (FNV-1a seeded xorshift): tests can compare
 * vectors without caring what they hold. Float32 values, so a base64 round trip is exact.
 */
export function mockVector(text: string, size: number): number[] {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  let x = h || 1;
  const raw: number[] = [];
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    raw.push((x / 0x1_0000_0000) * 2 - 1);
  }
  const norm = Math.sqrt(raw.reduce((s, v) => s + v * v, 0)) || 1;
  return raw.map((v) => Math.fround(v / norm));
}

/** A vector as its little-endian float32 bytes in base64 (browsers too: no Buffer). */
function base64Of(v: number[]): string {
  const bytes = new Uint8Array(v.length * 4);
  const view = new DataView(bytes.buffer);
  v.forEach((x, i) => view.setFloat32(i * 4, x, true));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** The inputs of a request, one per vector. */
function inputsOf(input: EmbeddingsRequest["input"]): (string | number[])[] {
  if (typeof input === "string") return [input];
  if (input.every((t) => typeof t === "number")) return [input as number[]]; // an array of numbers: one tokenized input
  return input as (string | number[])[]; // strings or token arrays, per the schema
}

/** The reply to `body` from a model making vectors of `size` values (or `dimensions`, when asked). */
export function renderEmbeddings(body: EmbeddingsRequest, size: number): EmbeddingsResponse {
  const inputs = inputsOf(body.input);
  const n = body.dimensions ?? size;
  let tokens = 0;
  const data = inputs.map((input, index) => {
    const text = typeof input === "string" ? input : `tokens:${input.join(",")}`;
    tokens += typeof input === "string" ? estimateTokens(input) : input.length;
    const v = mockVector(text, n);
    return { object: "embedding" as const, index, embedding: body.encoding_format === "base64" ? base64Of(v) : v };
  });
  return { object: "list", data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}
