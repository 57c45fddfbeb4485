import { type ArgumentHints, buildToolArguments } from "./build-tool-arguments";
import { firstWords, padReply, splitPieces } from "./build-reply-text";
import { countTextTokens, truncateToTokens } from "./count-text-tokens";
import type { JsonObject } from "./json-access";
import type { Directives, MidstreamMode, RefusalMode } from "./parse-directives";
import type { CacheUse } from "./prompt-cache";
import type { SimRequest, ToolSpec } from "./sim-request";

/** Why the reply ended, before each protocol names it (end_turn/stop/STOP, …). */
export type StopKind = "end" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

export interface ToolCallPlan {
  name: string;
  input: JsonObject;
  /** `JSON.stringify(input)`: the arguments string, streamed in fragments. */
  json: string;
}

/** Everything about one reply that does not depend on its wire format. */
export interface ReplyPlan {
  model: string;
  /** Thinking text pieces (empty = no thinking block) and its signature. */
  thinking: string[];
  signature: string;
  /** Whether thought text is sent (thinking tokens are counted either way). */
  showThinking: boolean;
  /** Text pieces; joined they are the reply text. Empty = no text. */
  text: string[];
  toolCalls: ToolCallPlan[];
  stop: StopKind;
  stopSequence: string | null;
  inputTokens: number;
  /** Of `inputTokens`, what came from or went to the prompt cache (messages protocol only). */
  cache?: CacheUse;
  /** Total output: thinking + text + tool-argument JSON (the messages protocol reports at least 1). */
  outputTokens: number;
  thinkingTokens: number;
  refusal?: RefusalMode;
  midstream?: MidstreamMode;
  variant?: string;
  /** Memo of {@link runningTokens}: plans are cached, so streams re-use the counts. */
  running?: { thinking: number[]; text: number[] };
}

/** Tokens of the thinking and of the text sent up to and including each piece (cumulative stream usage). */
export function runningTokens(plan: ReplyPlan): { thinking: number[]; text: number[] } {
  if (!plan.running) {
    const prefixes = (pieces: string[]) => {
      let sent = "";
      return pieces.map((p) => countTextTokens((sent += p)));
    };
    plan.running = { thinking: prefixes(plan.thinking), text: prefixes(plan.text) };
  }
  return plan.running;
}

export interface PlanDefaults {
  chunks: number;
  text?: string;
  answerModel?: (requested: string) => string;
}

/** Earliest stop sequence in `text`: the text before it and the sequence. */
function cutAtStop(text: string, stops: string[]): { text: string; seq: string } | undefined {
  let best: { text: string; seq: string } | undefined;
  for (const seq of stops) {
    const at = text.indexOf(seq);
    if (at !== -1 && (best === undefined || at < best.text.length)) best = { text: text.slice(0, at), seq };
  }
  return best;
}

/** No directive steers this reply: the simulator decides the way a model would. */
function undirected(d: Directives): boolean {
  return Object.keys(d).length === 0;
}

/**
 * The tool a model would reach for: the one the user's turn names last (as a word, any case),
 * else the first offered. Deterministic in the request.
 */
function likelyTool(tools: readonly ToolSpec[], turn: string): string {
  let best: { name: string; at: number } | undefined;
  const lower = turn.toLowerCase();
  for (const t of tools) {
    const name = t.name.toLowerCase();
    let at = lower.lastIndexOf(name);
    while (at !== -1 && !isWordAt(lower, at, name.length)) at = at === 0 ? -1 : lower.lastIndexOf(name, at - 1);
    if (at !== -1 && (best === undefined || at > best.at)) best = { name: t.name, at };
  }
  return best?.name ?? tools[0]!.name; // tools is non-empty: checked by the caller
}

function isWordAt(text: string, at: number, length: number): boolean {
  const word = /[a-z0-9_]/;
  return !word.test(text[at - 1] ?? " ") && !word.test(text[at + length] ?? " ");
}

function chooseToolCalls(req: SimRequest, d: Directives, turn: string): ToolCallPlan[] {
  if (req.tools.length === 0) return [];
  let names: string[] = [];
  if (d.tools !== undefined) {
    for (let i = 0; i < d.tools; i++) names.push(req.tools[i % req.tools.length]!.name);
  } else if (d.variant === "interleaved-tools") {
    names = [req.tools[0]!.name, req.tools[1 % req.tools.length]!.name];
  } else if (req.toolChoice.kind === "named") {
    names = [req.toolChoice.name];
  } else if (req.toolChoice.kind === "required") {
    names = [req.tools[0]!.name];
  } else if (req.toolChoice.kind === "auto" && undirected(d) && req.userLast && !req.toolResult) {
    // Like a model: a user's request with tools at hand gets a tool call; a tool's result gets
    // an answer in text (below). Directives switch this off, so that tests steer every reply.
    names = [likelyTool(req.tools, usersOwn(turn))];
  }
  if (!req.parallelTools) names = names.slice(0, 1);
  const hints = argumentHints(usersOwn(turn));
  return names.map((name) => {
    const input =
      name === PATCH_TOOL
        ? { input: patchInput(hints.path) }
        : buildToolArguments(req.tools.find((t) => t.name === name)?.schema, 0, hints);
    return { name, input, json: JSON.stringify(input) };
  });
}

/** A coding agent's free-form patch tool: its one string argument gets a well-formed patch, as a model writes one. */
const PATCH_TOOL = "apply_patch";

/** A patch that adds a small file beside the one the user named (a new file applies in any workspace). */
function patchInput(path: string | undefined): string {
  const target = path ? path.replace(/(\.[A-Za-z0-9]+)?$/, ".sim$1") : "sim-patch.txt";
  return `*** Begin Patch\n*** Add File: ${target}\n+Written by the simulator.\n*** End Patch\n`;
}

/** An opaque, deterministic signature for a thinking block (base64, as the real ones). */
export function thinkingSignature(tokens: number): string {
  return btoa(`sim-signature:${tokens}`);
}

/**
 * Decides the reply: which blocks, their text, the stop reason and exact token counts. Pure and
 * deterministic in (request, directives, defaults), so the result can be cached per body.
 */
/**
 * The user's own words of a turn: without the system text Turnpike folds into user turns for an
 * upstream that has no mid-conversation system messages (the `<system-message>` marker).
 */
function usersOwn(turn: string): string {
  return turn.includes("<system-message>") ? turn.replace(/<system-message>[\s\S]*?<\/system-message>/g, " ") : turn;
}

/**
 * The reply to a structured-output request: JSON valid against the schema (every property, each
 * with a sample value of its type), or `{"answer": …}` for a bare JSON-object request.
 */
function structuredReply(schema: unknown, quote: string): string {
  if (schema === undefined || schema === null || typeof schema !== "object")
    return JSON.stringify({ answer: `Simulated reply to: ${quote}` });
  return JSON.stringify(buildToolArguments(schema, 0, {}, true));
}

/** A file name the user's turn mentions (`notes.txt`, `src/app.ts`), for path-like arguments. */
function argumentHints(turn: string): ArgumentHints {
  const path = turn
    .match(/(?:^|\s)((?:[\w.-]+\/)*[\w-]+\.[A-Za-z0-9]{1,8})(?=$|[\s,;:!?)])/g)
    ?.at(-1)
    ?.trim();
  return path ? { path } : {};
}

export function planReply(
  req: SimRequest,
  inputTokens: number,
  d: Directives,
  quote: string,
  defaults: PlanDefaults,
  turn = quote,
): ReplyPlan {
  const chunks = d.chunks ?? defaults.chunks;
  const plan: ReplyPlan = {
    model: defaults.answerModel ? defaults.answerModel(req.model) : req.model,
    thinking: [],
    signature: "",
    showThinking: req.thinking === "visible",
    text: [],
    toolCalls: [],
    stop: "end",
    stopSequence: null,
    inputTokens,
    outputTokens: 0,
    thinkingTokens: 0,
  };
  if (d.midstreamError) plan.midstream = d.midstreamError;
  if (d.variant) plan.variant = d.variant;
  if (d.refusal) {
    plan.refusal = d.refusal;
    plan.stop = "refusal";
    return plan;
  }
  let budget = req.maxTokens ?? Infinity;
  if (d.think && req.thinking !== "off") {
    let thought = `Thinking about the request to ${req.model}: ${quote}. A deterministic answer follows.`;
    // A cap reached while thinking leaves no room for text (budget 0 below).
    if (countTextTokens(thought) > budget) thought = truncateToTokens(thought, budget);
    plan.thinkingTokens = countTextTokens(thought);
    budget -= plan.thinkingTokens;
    plan.thinking = splitPieces(thought, Math.max(1, Math.ceil(chunks / 4)));
    plan.signature = thinkingSignature(plan.thinkingTokens);
  }
  plan.toolCalls = chooseToolCalls(req, d, turn);
  let text: string;
  if (d.text !== undefined) text = d.text;
  else if (plan.toolCalls.length > 0) text = "";
  else if (req.json && undirected(d)) text = structuredReply(req.json.schema, quote);
  else if (defaults.text !== undefined) text = defaults.text;
  else if (req.toolResult) {
    text = padReply(
      `Simulated reply from ${req.model} after ${req.toolResult.name} returned: ${firstWords(req.toolResult.text, 12)}`,
      chunks,
    );
  } else text = padReply(`Simulated reply from ${req.model} to: ${quote}`, chunks);
  const cut = cutAtStop(text, req.stopSequences);
  if (cut) {
    text = cut.text;
    plan.stop = "stop_sequence";
    plan.stopSequence = cut.seq;
  }
  if (countTextTokens(text) > budget || (budget === 0 && plan.thinkingTokens > 0)) {
    text = truncateToTokens(text, budget);
    plan.stop = "max_tokens";
    plan.stopSequence = null;
  }
  // A reply that stopped inside its text never reached its tool calls.
  if (plan.stop !== "end") plan.toolCalls = [];
  else if (plan.toolCalls.length > 0) plan.stop = "tool_use";
  plan.text = splitPieces(text, chunks);
  const toolTokens = plan.toolCalls.reduce((n, c) => n + countTextTokens(c.json), 0);
  plan.outputTokens = plan.thinkingTokens + countTextTokens(text) + toolTokens;
  return plan;
}
