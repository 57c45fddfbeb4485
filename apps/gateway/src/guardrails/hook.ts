import { createHash } from "node:crypto";
import type { Span } from "./detectors";
import { type HookConfig, type Policy, LABEL, type Surface } from "./policy";
import { GuardrailBlock, type GuardrailRun } from "./run";

/** One text of the request as the hook receives it. */
export interface HookText {
  surface: Surface;
  text: string;
}

/**
 * What an external guardrail answers (docs/guardrails.md, "External hooks"): let the texts pass,
 * block the request naming a category, or redact spans (`index` into the texts sent, `start` and
 * `end` in UTF-16 code units, a `category` label).
 */
type HookAnswer =
  | { action: "allow" }
  | { action: "block"; category?: string }
  | { action: "redact"; spans: { index: number; start: number; end: number; category?: string }[] };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The answer checked: anything else is the hook failing (its policy's `on_error` decides). */
function readAnswer(v: unknown, texts: readonly HookText[]): HookAnswer | string {
  if (!isRecord(v)) return "the answer is not a JSON object";
  if (v.action === "allow") return { action: "allow" };
  if (v.action === "block") {
    const category = typeof v.category === "string" && LABEL.test(v.category) ? v.category : "hook";
    return { action: "block", category };
  }
  if (v.action !== "redact" || !Array.isArray(v.spans)) return 'action must be "allow", "block" or "redact" with spans';
  const spans: { index: number; start: number; end: number; category?: string }[] = [];
  for (const s of v.spans) {
    if (!isRecord(s)) return "a span is not an object";
    const { index, start, end } = s;
    const text = typeof index === "number" ? texts[index]?.text : undefined;
    if (
      text === undefined ||
      !Number.isInteger(start) ||
      !Number.isInteger(end) ||
      (start as number) < 0 ||
      (end as number) <= (start as number) ||
      (end as number) > text.length
    )
      return "a span is outside its text";
    spans.push({
      index: index as number,
      start: start as number,
      end: end as number,
      ...(typeof s.category === "string" && LABEL.test(s.category) ? { category: s.category } : {}),
    });
  }
  return { action: "redact", spans };
}

/** One call of a hook: its checked answer, or why it failed (a string). */
async function ask(
  hook: HookConfig,
  body: string,
  mine: readonly HookText[],
  fetcher: typeof fetch,
): Promise<HookAnswer | string> {
  try {
    const res = await fetcher(hook.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      signal: AbortSignal.timeout(hook.timeoutMs),
    });
    return res.ok ? readAnswer(await res.json(), mine) : `the hook answered ${res.status}`;
  } catch (e) {
    return (e as Error).name === "TimeoutError"
      ? `no answer within ${hook.timeoutMs} ms`
      : "the hook could not be reached";
  }
}

/**
 * Asks each policy's external hook about the request's texts, within the policy's timeout:
 * spans to redact come back per policy and text; a block throws GuardrailBlock (a dry-run policy
 * only counts it). A hook that fails, answers late or answers nonsense is `on_error`: `allow`
 * lets the texts pass (counted as `hook_error`), `block` refuses the request.
 */
export async function askHooks(
  run: GuardrailRun,
  texts: readonly HookText[],
  requestId: string,
  fetcher: typeof fetch = fetch,
): Promise<Map<Policy, Span[]>[]> {
  const perText: Map<Policy, Span[]>[] = texts.map(() => new Map());
  const hooked = run.policies.filter((p) => p.hook);
  await Promise.all(
    hooked.map(async (p) => {
      const hook = p.hook!; // filtered just above
      const mine = texts.map((t, index) => ({ ...t, index })).filter((t) => p.applyTo.has(t.surface));
      if (!mine.length) return;
      const sent = mine.map(({ surface, text }) => ({ surface, text }));
      // Asked once per request: another attempt sends the same texts and reads the same answer. Kept
      // by a digest of the policy and texts (not the request id): a batch line's answer, kept with
      // the line, serves its replay, a request of its own (batches/prepare-line.ts).
      const id = createHash("sha256")
        .update(JSON.stringify([p.name, sent]))
        .digest("hex");
      let asked = run.hookAnswers.get(id) as Promise<HookAnswer | string> | undefined; // stored just below, or kept by keptHookAnswers from one
      if (!asked) {
        asked = ask(hook, JSON.stringify({ policy: p.name, request_id: requestId, texts: sent }), mine, fetcher);
        run.hookAnswers.set(id, asked);
      }
      const answer = await asked;
      if (typeof answer === "string") {
        run.count(p, "hook_error");
        if (hook.onError === "block" && !p.dryRun) throw new GuardrailBlock(p.name, "hook_error");
        return;
      }
      if (answer.action === "block") {
        run.count(p, answer.category ?? "hook");
        if (!p.dryRun && p.action !== "log") throw new GuardrailBlock(p.name, answer.category ?? "hook");
        return;
      }
      if (answer.action === "redact")
        for (const s of answer.spans) {
          const at = mine[s.index]!.index; // checked in readAnswer
          const list = perText[at]!.get(p) ?? [];
          list.push({ start: s.start, end: s.end, label: s.category ?? "hook" });
          perText[at]!.set(p, list);
        }
    }),
  );
  return perText;
}
