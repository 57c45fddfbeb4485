/** Conformance table rows: forced tool_choice (any, named, none), assistant prefill, a PDF document (cells: see run-cells.ts). */
import { runScenarios } from "./run-cells";
import { SCENARIOS } from "./scenarios";

runScenarios([
  SCENARIOS.toolChoiceAny,
  SCENARIOS.toolChoiceNamed,
  SCENARIOS.toolChoiceNone,
  SCENARIOS.assistantPrefill,
  SCENARIOS.pdfDocument,
]);
