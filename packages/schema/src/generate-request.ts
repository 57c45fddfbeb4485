/**
 * The generateContent format as a client speaks it (`POST /v1beta/models/{model}:generateContent`,
 * docs/protocols.md §3 and §6): `contents` of `parts`, a `systemInstruction`, `tools` of
 * `functionDeclarations`, a `toolConfig` and a `generationConfig`. The model is in the path, not
 * the body. Parts and configs are checked for the fields Turnpike reads; every object allows more
 * (the format grows often), which a passthrough carries and a translation names in a warning.
 */
import { Type, type Static } from "@sinclair/typebox";

const open = { additionalProperties: true } as const;

/** One part of a turn: text, a thought, inline bytes, a file, a function call or its response. */
export const GeneratePartParam = Type.Object(
  {
    text: Type.Optional(Type.String()),
    thought: Type.Optional(Type.Boolean()),
    thoughtSignature: Type.Optional(Type.String()),
    inlineData: Type.Optional(Type.Object({ mimeType: Type.String({ minLength: 1 }), data: Type.String() }, open)),
    fileData: Type.Optional(
      Type.Object({ mimeType: Type.Optional(Type.String()), fileUri: Type.String({ minLength: 1 }) }, open),
    ),
    functionCall: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1 }),
          args: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          id: Type.Optional(Type.String()),
        },
        open,
      ),
    ),
    functionResponse: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1 }),
          response: Type.Record(Type.String(), Type.Unknown()),
          id: Type.Optional(Type.String()),
        },
        open,
      ),
    ),
  },
  open,
);
export type GeneratePartParam = Static<typeof GeneratePartParam>;

/** A turn: the user's (or a function's answers) or the model's. */
export const GenerateContentParam = Type.Object(
  {
    role: Type.Optional(
      Type.Union([Type.Literal("user"), Type.Literal("model"), Type.Literal("function")], {
        expected: 'one of "user", "model"',
      }),
    ),
    parts: Type.Array(GeneratePartParam),
  },
  open,
);
export type GenerateContentParam = Static<typeof GenerateContentParam>;

/** A function the model may call; `parametersJsonSchema` is plain JSON Schema, `parameters` the OpenAPI subset. */
export const GenerateFunctionDeclarationParam = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    parametersJsonSchema: Type.Optional(Type.Unknown()),
  },
  open,
);
export type GenerateFunctionDeclarationParam = Static<typeof GenerateFunctionDeclarationParam>;

/** One entry of `tools`: function declarations, or one of the vendor's own tools (`googleSearch`, `codeExecution`, …). */
export const GenerateToolParam = Type.Object(
  { functionDeclarations: Type.Optional(Type.Array(GenerateFunctionDeclarationParam)) },
  open,
);
export type GenerateToolParam = Static<typeof GenerateToolParam>;

export const GenerateFunctionCallingMode = Type.Union(
  [
    Type.Literal("MODE_UNSPECIFIED"),
    Type.Literal("AUTO"),
    Type.Literal("ANY"),
    Type.Literal("NONE"),
    Type.Literal("VALIDATED"),
  ],
  { expected: 'one of "AUTO", "ANY", "NONE", "VALIDATED"' },
);

export const GenerateToolConfigParam = Type.Object(
  {
    functionCallingConfig: Type.Optional(
      Type.Object(
        {
          mode: Type.Optional(GenerateFunctionCallingMode),
          allowedFunctionNames: Type.Optional(Type.Array(Type.String())),
        },
        open,
      ),
    ),
  },
  open,
);
export type GenerateToolConfigParam = Static<typeof GenerateToolConfigParam>;

export const GenerateThinkingConfigParam = Type.Object(
  {
    includeThoughts: Type.Optional(Type.Boolean()),
    /** 0 = off, -1 = the model decides. */
    thinkingBudget: Type.Optional(Type.Integer({ minimum: -1 })),
    thinkingLevel: Type.Optional(
      Type.Union(
        [
          Type.Literal("THINKING_LEVEL_UNSPECIFIED"),
          Type.Literal("MINIMAL"),
          Type.Literal("LOW"),
          Type.Literal("MEDIUM"),
          Type.Literal("HIGH"),
        ],
        {
          expected: 'one of "MINIMAL", "LOW", "MEDIUM", "HIGH"',
        },
      ),
    ),
  },
  open,
);
export type GenerateThinkingConfigParam = Static<typeof GenerateThinkingConfigParam>;

export const GenerateGenerationConfigParam = Type.Object(
  {
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    topK: Type.Optional(Type.Number({ minimum: 0 })),
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    stopSequences: Type.Optional(Type.Array(Type.String())),
    candidateCount: Type.Optional(Type.Integer({ minimum: 1 })),
    seed: Type.Optional(Type.Integer()),
    presencePenalty: Type.Optional(Type.Number()),
    frequencyPenalty: Type.Optional(Type.Number()),
    responseMimeType: Type.Optional(Type.String()),
    responseSchema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    responseJsonSchema: Type.Optional(Type.Unknown()),
    thinkingConfig: Type.Optional(GenerateThinkingConfigParam),
  },
  open,
);
export type GenerateGenerationConfigParam = Static<typeof GenerateGenerationConfigParam>;

/**
 * The body of `:generateContent`, `:streamGenerateContent` and (its `contents` at least)
 * `:countTokens`.
 *
 * @example
 * ```ts
 * const req: GenerateRequest = {
 *   systemInstruction: { parts: [{ text: "Be brief." }] },
 *   contents: [{ role: "user", parts: [{ text: "Hello" }] }],
 *   generationConfig: { maxOutputTokens: 256 },
 * };
 * ```
 */
export const GenerateRequest = Type.Object(
  {
    contents: Type.Array(GenerateContentParam, { minItems: 1 }),
    systemInstruction: Type.Optional(
      Type.Object({ role: Type.Optional(Type.String()), parts: Type.Array(GeneratePartParam) }, open),
    ),
    tools: Type.Optional(Type.Array(GenerateToolParam)),
    toolConfig: Type.Optional(GenerateToolConfigParam),
    generationConfig: Type.Optional(GenerateGenerationConfigParam),
    safetySettings: Type.Optional(Type.Array(Type.Object({ category: Type.String(), threshold: Type.String() }, open))),
    cachedContent: Type.Optional(Type.String()),
    /** The model, as `models/{id}`: the path names it; a count request's inner request may too. */
    model: Type.Optional(Type.String()),
  },
  open,
);
export type GenerateRequest = Static<typeof GenerateRequest>;

/** The body of `:countTokens`: the prompt's `contents`, or a whole `generateContentRequest`. */
export const GenerateCountTokensRequest = Type.Object(
  { contents: Type.Optional(Type.Array(GenerateContentParam)), generateContentRequest: Type.Optional(GenerateRequest) },
  open,
);
export type GenerateCountTokensRequest = Static<typeof GenerateCountTokensRequest>;

/** A part of a reply (text, thought, function call), as Turnpike writes it. */
export const GenerateReplyPart = Type.Object({
  text: Type.Optional(Type.String()),
  thought: Type.Optional(Type.Boolean()),
  thoughtSignature: Type.Optional(Type.String()),
  functionCall: Type.Optional(
    Type.Object({
      id: Type.Optional(Type.String()),
      name: Type.String(),
      args: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
});
export type GenerateReplyPart = Static<typeof GenerateReplyPart>;

/** Token counts; cumulative in a stream (each chunk's overwrites the last). */
export const GenerateUsageMetadata = Type.Object({
  promptTokenCount: Type.Integer({ minimum: 0 }),
  candidatesTokenCount: Type.Optional(Type.Integer({ minimum: 0 })),
  totalTokenCount: Type.Integer({ minimum: 0 }),
  cachedContentTokenCount: Type.Optional(Type.Integer({ minimum: 0 })),
  thoughtsTokenCount: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type GenerateUsageMetadata = Static<typeof GenerateUsageMetadata>;

/**
 * A reply of `:generateContent`, and each chunk of `:streamGenerateContent` (a stream's chunks
 * before the last carry no `finishReason` and no `usageMetadata`).
 *
 * @example
 * ```ts
 * const res: GenerateResponse = {
 *   candidates: [{ content: { role: "model", parts: [{ text: "Hi!" }] }, finishReason: "STOP", index: 0 }],
 *   usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
 *   modelVersion: "gamma-3-pro",
 *   responseId: "gen_01",
 * };
 * ```
 */
export const GenerateResponse = Type.Object({
  candidates: Type.Array(
    Type.Object({
      content: Type.Object({ role: Type.Literal("model"), parts: Type.Array(GenerateReplyPart) }),
      finishReason: Type.Optional(Type.String()),
      index: Type.Integer({ minimum: 0 }),
    }),
  ),
  promptFeedback: Type.Optional(Type.Object({ blockReason: Type.Optional(Type.String()) })),
  usageMetadata: Type.Optional(GenerateUsageMetadata),
  modelVersion: Type.String(),
  responseId: Type.String(),
});
export type GenerateResponse = Static<typeof GenerateResponse>;

/** An error in the format's envelope: the HTTP code and its status word. */
export const GenerateErrorBody = Type.Object({
  error: Type.Object({
    code: Type.Integer(),
    message: Type.String(),
    status: Type.String(),
    details: Type.Optional(Type.Array(Type.Unknown())),
  }),
});
export type GenerateErrorBody = Static<typeof GenerateErrorBody>;

/** `GET /v1beta/models`: a model as the format lists it. */
export const GenerateModel = Type.Object({
  name: Type.String(),
  baseModelId: Type.Optional(Type.String()),
  version: Type.String(),
  displayName: Type.String(),
  description: Type.Optional(Type.String()),
  inputTokenLimit: Type.Integer({ minimum: 1 }),
  outputTokenLimit: Type.Integer({ minimum: 1 }),
  supportedGenerationMethods: Type.Array(Type.String()),
  /** The model reasons before it answers (asked with `thinkingConfig`). */
  thinking: Type.Optional(Type.Boolean()),
});
export type GenerateModel = Static<typeof GenerateModel>;

/** `GET /v1beta/models`. */
export const GenerateModelList = Type.Object({ models: Type.Array(GenerateModel) });
export type GenerateModelList = Static<typeof GenerateModelList>;

/** `:countTokens`. */
export const GenerateCountTokensResponse = Type.Object({ totalTokens: Type.Integer({ minimum: 0 }) });
export type GenerateCountTokensResponse = Static<typeof GenerateCountTokensResponse>;
