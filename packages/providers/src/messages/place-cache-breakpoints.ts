/**
 * Automatic prompt-cache breakpoints for a messages-format upstream (docs/protocols.md §1.3,
 * §1.6). Most clients — every chat-completions client, most SDKs — never set `cache_control`,
 * so a long conversation pays the full input price on every turn although its prefix repeats.
 * For a request that carries no breakpoint at all, this places them where a conversation is
 * stable, at most four (the vendor's limit):
 * 1. the last tool definition (the tools come first in the cached prefix);
 * 2. the last system block;
 * 3. the last block of the conversation, so that this call writes the whole prefix; and
 * 4. the last block of the user turn before it, so that this call reads what the previous call
 *    wrote even when the newest turn changed.
 * Thinking blocks cannot carry a breakpoint, so a message's last block that can is chosen.
 * A request that sets any breakpoint itself is left as it is: the client has chosen.
 */
import type { CacheControl, ContentBlockParam, MessageParam, MessagesRequest, TextBlockParam } from "@turnpike/schema";
import { usesCacheControl } from "../cache-control.js";

const EPHEMERAL: CacheControl = { type: "ephemeral" };

/** Blocks that may carry a breakpoint (not thinking, not redacted thinking). */
function cacheable(b: ContentBlockParam): boolean {
  return b.type !== "thinking" && b.type !== "redacted_thinking";
}

/** The message with a breakpoint on its last block that can take one; undefined if none can. */
function marked(m: MessageParam): MessageParam | undefined {
  if (typeof m.content === "string")
    return m.content
      ? { role: m.role, content: [{ type: "text", text: m.content, cache_control: EPHEMERAL }] }
      : undefined;
  const at = m.content.findLastIndex(cacheable);
  if (at === -1) return undefined;
  // Every block type but thinking takes `cache_control` (§1.3); the union cannot say so per member.
  const content = m.content.map((b, i) => (i === at ? ({ ...b, cache_control: EPHEMERAL } as ContentBlockParam) : b));
  return { role: m.role, content };
}

/**
 * The request with Turnpike's breakpoints, or `undefined` when it already sets its own (or has
 * nothing to cache).
 *
 * @example
 * ```ts
 * const body = placeCacheBreakpoints({ model: "m", max_tokens: 64, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] });
 * // body.system = [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }]
 * // body.messages[0].content = [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }]
 * ```
 */
export function placeCacheBreakpoints(req: MessagesRequest): MessagesRequest | undefined {
  if (usesCacheControl(req)) return undefined;
  const out: MessagesRequest = { ...req };
  let placed = 0;
  const lastTool = req.tools?.length ? req.tools.length - 1 : -1;
  if (req.tools && lastTool >= 0) {
    out.tools = req.tools.map((t, i) => (i === lastTool ? { ...t, cache_control: EPHEMERAL } : t));
    placed++;
  }
  if (typeof req.system === "string" && req.system) {
    out.system = [{ type: "text", text: req.system, cache_control: EPHEMERAL }];
    placed++;
  } else if (Array.isArray(req.system) && req.system.length > 0) {
    const last = req.system.length - 1;
    out.system = req.system.map((b, i): TextBlockParam => (i === last ? { ...b, cache_control: EPHEMERAL } : b));
    placed++;
  }
  // The conversation: its last message, then the user turn before the newest user turn.
  const messages = [...req.messages];
  const targets: number[] = [];
  const lastIndex = messages.findLastIndex((m) => m.role !== "system");
  if (lastIndex >= 0) targets.push(lastIndex);
  const newestUser = messages.findLastIndex((m) => m.role === "user");
  const previousUser = newestUser > 0 ? messages.slice(0, newestUser).findLastIndex((m) => m.role === "user") : -1;
  if (previousUser >= 0 && previousUser !== lastIndex) targets.push(previousUser);
  for (const i of targets) {
    if (placed >= 4) break;
    const m = marked(messages[i]!); // i is an index found in this array
    if (!m) continue;
    messages[i] = m;
    placed++;
  }
  out.messages = messages;
  return placed > 0 ? out : undefined;
}
