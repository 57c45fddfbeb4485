import { invalid } from "../vocabulary/client-errors";

/** How the vectors go back: JSON numbers, or each vector's little-endian float32 bytes in base64. */
export type EncodingFormat = "float" | "base64";

/** One input: a text, or a text already tokenized by the client (token ids). */
export type EmbeddingInput = string | number[];

/** A `POST /v1/embeddings` body, checked. */
export interface EmbeddingsRequest {
  model: string;
  inputs: EmbeddingInput[];
  dimensions: number | undefined;
  encodingFormat: EncodingFormat;
  user: string | undefined;
  /**
   * What the vectors are for (`RETRIEVAL_QUERY`, `RETRIEVAL_DOCUMENT`, …): a Turnpike extension
   * carried to the generateContent protocol's `taskType`; the chat protocol has no such field.
   */
  taskType: string | undefined;
}

/** The most inputs one call may carry (the chat family's own limit). */
export const MAX_INPUTS = 2048;

/** The task types of the generateContent protocol's embeddings calls. */
export const TASK_TYPES = [
  "TASK_TYPE_UNSPECIFIED",
  "RETRIEVAL_QUERY",
  "RETRIEVAL_DOCUMENT",
  "SEMANTIC_SIMILARITY",
  "CLASSIFICATION",
  "CLUSTERING",
  "QUESTION_ANSWERING",
  "FACT_VERIFICATION",
  "CODE_RETRIEVAL_QUERY",
] as const;

const isTokenArray = (v: unknown): v is number[] =>
  Array.isArray(v) && v.length > 0 && v.every((t) => Number.isInteger(t) && t >= 0);

/** The inputs of `input`: a string, an array of strings, an array of token ids, or an array of those. */
function readInputs(input: unknown): EmbeddingInput[] {
  const where = "input";
  if (typeof input === "string") {
    if (input === "") throw invalid("`input` must not be empty.", where);
    return [input];
  }
  if (!Array.isArray(input) || input.length === 0)
    throw invalid(
      "`input` must be a non-empty string, an array of strings, an array of token ids, or an array of token-id arrays.",
      where,
    );
  // An array of integers is one tokenized input; an array of strings or of arrays is several.
  if (input.every((t) => typeof t === "number")) {
    if (!isTokenArray(input)) throw invalid("`input` as token ids must hold non-negative integers.", where);
    return [input];
  }
  if (input.length > MAX_INPUTS)
    throw invalid(`\`input\` holds ${input.length} items; at most ${MAX_INPUTS} are taken in one call.`, where);
  return input.map((item, i) => {
    if (typeof item === "string") {
      if (item === "") throw invalid(`\`input[${i}]\` must not be empty.`, where);
      return item;
    }
    if (isTokenArray(item)) return item;
    throw invalid(`\`input[${i}]\` must be a non-empty string or a non-empty array of token ids.`, where);
  });
}

/** The body read as an embeddings request, or a 400 naming the field that is wrong. */
export function readEmbeddingsRequest(body: Record<string, unknown>): EmbeddingsRequest {
  if (typeof body.model !== "string" || body.model === "")
    throw invalid("`model` is required: an embedding model's id.", "model");
  const inputs = readInputs(body.input);
  const { dimensions, encoding_format: format, user, task_type: taskType } = body;
  if (
    dimensions !== undefined &&
    dimensions !== null &&
    !(Number.isInteger(dimensions) && (dimensions as number) > 0)
  ) {
    throw invalid("`dimensions` must be a positive integer.", "dimensions");
  }
  if (format !== undefined && format !== null && format !== "float" && format !== "base64")
    throw invalid("`encoding_format` must be `float` or `base64`.", "encoding_format");
  if (user !== undefined && user !== null && typeof user !== "string")
    throw invalid("`user` must be a string.", "user");
  if (
    taskType !== undefined &&
    taskType !== null &&
    !(typeof taskType === "string" && (TASK_TYPES as readonly string[]).includes(taskType))
  ) {
    throw invalid(`\`task_type\` must be one of ${TASK_TYPES.join(", ")}.`, "task_type");
  }
  return {
    model: body.model,
    inputs,
    dimensions: typeof dimensions === "number" ? dimensions : undefined,
    encodingFormat: format === "base64" ? "base64" : "float",
    user: typeof user === "string" ? user : undefined,
    taskType: typeof taskType === "string" ? taskType : undefined,
  };
}
