/**
 * The generateContent protocol (upstream only, docs/protocols.md §3), minimal: only the fields
 * Turnpike writes or reads. Replies are read leniently; unknown fields pass (docs/style.md rule 1).
 */

export interface GeneratePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response: Record<string, unknown>; id?: string };
}

export interface GenerateContent {
  role: "user" | "model";
  parts: GeneratePart[];
}

export interface GenerateFunctionDeclaration {
  name: string;
  description?: string;
  /** Full JSON Schema (`parameters`, the OpenAPI subset, is never written: §3.2). */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GenerateThinkingConfig {
  includeThoughts?: boolean;
  /** 0 = off, -1 = dynamic. */
  thinkingBudget?: number;
}

export interface GenerateGenerationConfig {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
  responseLogprobs?: boolean;
  logprobs?: number;
  thinkingConfig?: GenerateThinkingConfig;
}

export interface GenerateRequest {
  contents: GenerateContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: GenerateFunctionDeclaration[] }[];
  toolConfig?: {
    functionCallingConfig: { mode: "AUTO" | "ANY" | "NONE" | "VALIDATED"; allowedFunctionNames?: string[] };
  };
  generationConfig?: GenerateGenerationConfig;
}

/** What is read from a reply or a stream event; every field optional. */
export interface GenerateResponse {
  candidates?: {
    content?: { role?: string; parts?: GeneratePart[] };
    finishReason?: string;
    index?: number;
  }[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: Record<string, unknown>;
  modelVersion?: string;
  responseId?: string;
}
