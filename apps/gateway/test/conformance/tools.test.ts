/** Conformance table rows: tool calls (one, parallel, after text, without arguments) and the tool-result round trip (cells: see run-cells.ts). */
import { runScenarios } from "./run-cells";
import { SCENARIOS } from "./scenarios";

runScenarios([
  SCENARIOS.oneToolCall,
  SCENARIOS.parallelToolCalls,
  SCENARIOS.textThenToolCall,
  SCENARIOS.toolWithoutArguments,
  SCENARIOS.toolResultRoundTrip,
]);
