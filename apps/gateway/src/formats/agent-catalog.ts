import { readFileSync } from "node:fs";
import type { CatalogEntry } from "../vocabulary/target";

/**
 * The models list as the coding agents read it (docs/protocols.md, "Model lists for agents"),
 * beside the list the official client libraries read.
 *
 * The Responses-format agent decodes a top-level `models` array of its own model metadata; a
 * model it finds there gets that metadata (context window, reasoning levels, its patch tool
 * offered as a free-form tool, which every Turnpike upstream now takes) instead of generic
 * fallback metadata. Unknown fields are ignored by its decoder, so the entries carry the fields
 * its current releases require and no more.
 *
 * The messages-format agent's model picker keeps only ids that name its vendor; Turnpike answers
 * its discovery with each other model under an alias it keeps (`claude-code/<id>`), and takes
 * the alias back wherever a model id is read.
 */

/** The prefix under which the messages-format agent's picker is shown a model whose id would be filtered out. */
export const PICKER_ALIAS_PREFIX = "claude-code/";

/** Ids the messages-format agent's picker keeps as they are. */
const KEPT_BY_PICKER = /(claude|anthropic)/i;

/**
 * The agent's decoder refuses a model without instructions of its own: these, written for
 * Turnpike (decisions/0011-agent-model-catalog.md). An agent's own configured instructions
 * (its `model_instructions_file`) still win over them.
 */
const AGENT_INSTRUCTIONS = readFileSync(new URL("./agent-instructions.md", import.meta.url), "utf8");

/** Reasoning levels offered for every model: each upstream maps the effort to its own knob (docs/protocols.md §4.2). */
const REASONING_LEVELS = [
  { effort: "low", description: "Quick answers with light reasoning" },
  { effort: "medium", description: "Balanced reasoning for everyday work" },
  { effort: "high", description: "Deeper reasoning for hard problems" },
];

/** One model as the Responses-format agent's `ModelInfo`, `priority` its place in the list (lower first). */
export function agentModelInfo(e: CatalogEntry, priority: number) {
  return {
    slug: e.id,
    display_name: e.display_name,
    description: `${e.display_name} through Turnpike (${e.owned_by})`,
    default_reasoning_level: "medium",
    supported_reasoning_levels: REASONING_LEVELS,
    shell_type: "shell_command",
    visibility: "list",
    supported_in_api: true,
    priority,
    upgrade: null,
    availability_nux: null,
    base_instructions: AGENT_INSTRUCTIONS,
    supports_reasoning_summaries: true,
    default_reasoning_summary: "auto",
    support_verbosity: false,
    default_verbosity: null,
    // Free-form (custom) tools reach every upstream protocol (formats/responses.ts).
    apply_patch_tool_type: "freeform",
    web_search_tool_type: "text",
    truncation_policy: { mode: "tokens", limit: 10_000 },
    supports_parallel_tool_calls: true,
    supports_image_detail_original: false,
    context_window: e.context_window,
    max_context_window: e.context_window,
    auto_compact_token_limit: null,
    effective_context_window_percent: 95,
    experimental_supported_tools: [],
    input_modalities: ["text", "image"],
    additional_speed_tiers: [],
    service_tiers: [],
    default_service_tier: null,
    include_skills_usage_instructions: false,
    supports_search_tool: false,
    use_responses_lite: false,
    auto_review_model_override: null,
    tool_mode: null,
    multi_agent_version: null,
    comp_hash: null,
    // The agent dials the Responses WebSocket first for a model that prefers it (routes/responses-websocket.ts).
    prefer_websockets: true,
    minimal_client_version: "0.1.0",
    available_in_plans: [],
    supports_reasoning_summary_parameter: true,
    supports_reasoning_effort_updates: false,
    supports_experimental_context: false,
    include_apps_usage_instructions: false,
    include_plugin_usage_instructions: false,
    multi_agent_reasoning_effort: null,
    guardian: null,
    node_repl_auto_review_required: false,
    node_repl_disabled: false,
    requires_sandboxed_review: false,
    model_specialty: null,
  };
}

/** Whether a models-list request is the messages-format agent's discovery (its client names itself in User-Agent). */
export function isPickerDiscovery(request: Request): boolean {
  return /^claude-(cli|code)\//i.test(request.headers.get("user-agent") ?? "");
}

/**
 * A models list asked for by a coding agent (the messages-format agent's picker, the
 * Responses-format agent with its `client_version`, or another agent by its user agent): each
 * model it is shown is one it may offer to chat with, so embedding models are left out.
 */
export function isAgentDiscovery(request: Request): boolean {
  if (isPickerDiscovery(request)) return true;
  if (new URL(request.url).searchParams.has("client_version")) return true;
  return /^(codex|opencode)[_\w-]*\//i.test(request.headers.get("user-agent") ?? "");
}

/** A model id as the messages-format agent's picker keeps it. */
export function pickerId(id: string): string {
  return KEPT_BY_PICKER.test(id) ? id : `${PICKER_ALIAS_PREFIX}${id}`;
}

/** The catalog id an agent alias stands for (an id that is no alias is returned as it is). */
export function unaliased(model: string): string {
  return model.startsWith(PICKER_ALIAS_PREFIX) ? model.slice(PICKER_ALIAS_PREFIX.length) : model;
}
