import { type ClientTool, type ToolDefinition, isRecord } from "@turnpike/schema";

/** Small helpers to read vendor JSON leniently (docs/style.md rule 1: read only what we use). */

export { isRecord };

/** `JSON.parse` that returns `undefined` instead of throwing. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Tool-call arguments (a JSON string) → the object the messages format requires as `input`.
 * `""` means no arguments (`{}`). Text that is not a JSON object is kept, not dropped, under
 * `_raw_arguments`, so the tool's own validation fails visibly and the model can retry with
 * correct JSON (README "Invalid tool arguments").
 */
export function parseToolArguments(args: string | undefined | null): Record<string, unknown> {
  if (args === undefined || args === null || args.trim() === "") return {};
  const parsed = tryParseJson(args);
  if (isRecord(parsed)) return parsed;
  return { _raw_arguments: args };
}

/** A client tool (has `input_schema`; `type` absent or "custom") rather than a vendor server tool. */
export function isClientTool(t: ToolDefinition): t is ClientTool {
  return "input_schema" in t && (t.type === undefined || t.type === "custom");
}
