/** Conformance table rows: image, thinking (cells: see run-cells.ts). */
import { runScenarios } from "./run-cells";
import { SCENARIOS } from "./scenarios";

runScenarios([SCENARIOS.image, SCENARIOS.thinking]);
