/** Conformance table rows: plain text, system prompt, multi-turn (cells: see run-cells.ts). */
import { runScenarios } from "./run-cells";
import { SCENARIOS } from "./scenarios";

runScenarios([SCENARIOS.plainText, SCENARIOS.systemPrompt, SCENARIOS.multiTurn]);
