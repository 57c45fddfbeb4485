/** Chat `tools` / `tool_choice` / `parallel_tool_calls` → messages format (docs/protocols.md §4.1). */
import type { ChatFunctionDefinition, ChatRequest, ToolChoice, ToolDefinition } from "@turnpike/schema";
import { noteDerived } from "../client-paths.js";
import { invalidRequest } from "../errors.js";
import type { Warnings } from "../warnings.js";

export interface ConvertedChatTools {
  tools: ToolDefinition[] | undefined;
  toolChoice: ToolChoice | undefined;
}

function toolOf(fn: ChatFunctionDefinition, at: string): ToolDefinition {
  const params = fn.parameters ?? {};
  // The messages format requires `input_schema.type: "object"`; a function without parameters
  // takes none.
  const input_schema = { ...params, type: "object" as const };
  const tool = {
    name: fn.name,
    ...(fn.description !== undefined ? { description: fn.description } : {}),
    input_schema,
    ...(typeof fn.strict === "boolean" ? { strict: fn.strict } : {}),
  };
  noteDerived(tool, fn, at, { input_schema: "parameters" });
  return tool;
}

export function convertChatToolsToMessages(req: ChatRequest, warnings: Warnings): ConvertedChatTools {
  let defs: ChatFunctionDefinition[] | undefined;
  if (req.tools && req.tools.length > 0) {
    defs = req.tools.map((t, i) => {
      if (t.type !== "function") {
        throw invalidRequest(
          `tools[${i}]`,
          `"${t.type}" tools (free-form input) cannot be translated for this model; use function tools`,
        );
      }
      return t.function;
    });
  } else if (req.functions && req.functions.length > 0) {
    defs = req.functions; // legacy `functions`
  }

  let choice: ToolChoice | undefined;
  let allowed: Set<string> | undefined;
  const tc = req.tool_choice ?? legacyChoice(req.function_call);
  if (tc !== undefined) {
    if (tc === "none") choice = { type: "none" };
    else if (tc === "auto") choice = { type: "auto" };
    else if (tc === "required") choice = { type: "any" };
    else if (tc.type === "function") choice = { type: "tool", name: tc.function.name };
    else if (tc.type === "allowed_tools") {
      allowed = new Set(tc.allowed_tools.tools.map(allowedName).filter((n): n is string => n !== undefined));
      choice = { type: tc.allowed_tools.mode === "required" ? "any" : "auto" };
    } else {
      throw invalidRequest("tool_choice", "a custom tool choice cannot be translated for this model");
    }
  }

  if (!defs) {
    if (choice && choice.type !== "none") warnings.add("tool_choice", "ignored: the request has no tools");
    if (req.parallel_tool_calls === false) warnings.add("parallel_tool_calls", "ignored: the request has no tools");
    return { tools: undefined, toolChoice: undefined };
  }

  // `allowed_tools` restricts the model to a subset: only that subset is offered.
  const where = new Map(defs.map((d, i) => [d, req.tools?.length ? `tools[${i}].function` : `functions[${i}]`]));
  const tools = defs.filter((d) => !allowed || allowed.has(d.name)).map((d) => toolOf(d, where.get(d)!)); // every d is a key
  const chosen = choice?.type === "tool" ? choice.name : undefined;
  if (chosen !== undefined && !tools.some((t) => t.name === chosen)) {
    throw invalidRequest("tool_choice", `names the function "${chosen}", which is not in tools`);
  }
  if (req.parallel_tool_calls === false) {
    if (!choice) choice = { type: "auto", disable_parallel_tool_use: true };
    else if (choice.type !== "none") choice = { ...choice, disable_parallel_tool_use: true };
  }
  return { tools, toolChoice: choice };
}

function legacyChoice(fc: ChatRequest["function_call"]): ChatRequest["tool_choice"] {
  if (fc === undefined) return undefined;
  if (fc === "none" || fc === "auto") return fc;
  return { type: "function", function: { name: fc.name } };
}

function allowedName(t: Record<string, unknown>): string | undefined {
  const fn = t.function;
  if (typeof fn === "object" && fn !== null && "name" in fn && typeof fn.name === "string") return fn.name;
  return typeof t.name === "string" ? t.name : undefined;
}
