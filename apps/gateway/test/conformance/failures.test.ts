/** Conformance table rows: refusal or content filter, mid-stream error (cells: see run-cells.ts). */
import { runScenarios } from "./run-cells";
import { SCENARIOS } from "./scenarios";

runScenarios([SCENARIOS.refusal, SCENARIOS.midstreamError]);
