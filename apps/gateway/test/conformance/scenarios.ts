/**
 * The conformance table: its rows, in README order. Each row runs through every client format ×
 * upstream protocol × JSON / stream (`run-cells.ts`); see `scenario.ts` for what a row holds.
 */
import { assistantPrefill, pdfDocument, toolChoiceAny, toolChoiceNamed, toolChoiceNone } from "./choice-scenarios";
import { maxTokens, midstreamError, refusal, stopSequence } from "./end-scenarios";
import { image, multiTurn, plainText, systemPrompt, thinking } from "./text-scenarios";
import {
  oneToolCall,
  parallelToolCalls,
  textThenToolCall,
  toolResultRoundTrip,
  toolWithoutArguments,
} from "./tool-scenarios";

export const SCENARIOS = {
  plainText,
  systemPrompt,
  multiTurn,
  oneToolCall,
  parallelToolCalls,
  textThenToolCall,
  toolWithoutArguments,
  toolResultRoundTrip,
  toolChoiceAny,
  toolChoiceNamed,
  toolChoiceNone,
  assistantPrefill,
  image,
  pdfDocument,
  thinking,
  stopSequence,
  maxTokens,
  refusal,
  midstreamError,
} as const;
