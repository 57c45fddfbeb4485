/** Conformance table rows: stop sequence, max tokens (cells: see run-cells.ts). */
import { runScenarios } from "./run-cells";
import { SCENARIOS } from "./scenarios";

runScenarios([SCENARIOS.stopSequence, SCENARIOS.maxTokens]);
