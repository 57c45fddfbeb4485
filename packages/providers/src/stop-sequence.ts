/**
 * Which stop sequence ended a reply, when the upstream does not say.
 *
 * Chat completions and generateContent both report a matched stop sequence as a plain natural
 * stop (`stop` / `STOP`) and remove the sequence from the text, so in general it cannot be known
 * (docs/protocols.md §4.3). Turnpike reports `stop_sequence` only on evidence:
 * 1. the upstream names the match (vLLM's `choices[].stop_reason` string, SGLang's `matched_stop`),
 *    and it is one of the requested sequences; or
 * 2. the upstream left the sequence at the end of the text (some compatible servers do): the
 *    sequence is then cut from the text, as the messages format does.
 * Otherwise the reply is `end_turn`. Guessing from "exactly one sequence was requested" would
 * mislabel every natural stop, so it is not done.
 */
export interface StopSequenceMatch {
  sequence: string;
  /** The text with the sequence removed from its end. */
  text: string;
}

export function findStopSequence(
  text: string,
  stopSequences: readonly string[] | undefined,
  named?: unknown,
): StopSequenceMatch | undefined {
  if (!stopSequences || stopSequences.length === 0) return undefined;
  if (typeof named === "string" && stopSequences.includes(named)) return { sequence: named, text };
  for (const s of stopSequences) {
    if (s.length > 0 && text.endsWith(s)) return { sequence: s, text: text.slice(0, text.length - s.length) };
  }
  return undefined;
}
