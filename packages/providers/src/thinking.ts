/**
 * Reasoning effort ⇄ thinking budget (docs/protocols.md §4.2). One table each way (docs/style.md rule 10).
 *
 * Effort → budget: low 1024, medium 2048, high 4096 (the budgets clients commonly expect), extended
 * for the newer efforts, with `minimal` at 1024 too because the messages format requires
 * `budget_tokens ≥ 1024`. Budget → effort is the reverse bucketing; it stops at `high`
 * because `xhigh`/`max` exist only on some chat models.
 */
import type { ReasoningEffort } from "@turnpike/schema";

/** The messages format's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

export const EFFORT_TO_BUDGET: Record<Exclude<ReasoningEffort, "none">, number> = {
  minimal: 1024,
  low: 1024,
  medium: 2048,
  high: 4096,
  xhigh: 8192,
  max: 16384,
};

/** Budget → chat `reasoning_effort`. */
export function budgetToEffort(budget: number): "low" | "medium" | "high" {
  if (budget <= EFFORT_TO_BUDGET.low) return "low";
  if (budget <= EFFORT_TO_BUDGET.medium) return "medium";
  return "high";
}

/** Messages `output_config.effort` → chat `reasoning_effort` (same names up to `high`). */
export function outputEffortToChat(effort: string): "low" | "medium" | "high" {
  if (effort === "low" || effort === "medium") return effort;
  return "high";
}
