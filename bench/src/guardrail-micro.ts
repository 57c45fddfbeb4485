/**
 * What a guardrail policy costs a request, in process: the redaction of a prompt (every
 * detector of the policy over its text) and the restoration of a reply of the same size, per KB
 * of prompt, for prompts of 1, 10 and 100 KB (prose and code with a few values to find). CPU from
 * `process.cpuUsage()`, the median of the rounds.
 *
 *   bun src/guardrail-micro.ts [--rounds N] [DIR]   (DIR: an apps/gateway, default ../apps/gateway)
 *
 * A request with no policy attached runs none of this: the call path checks one map's size
 * (pipeline/inference.ts) and takes its usual passthrough or translation.
 */
import { parseArgs } from "node:util";
import { resolve } from "node:path";

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: "string", default: "9" } },
});
const dir = resolve(positionals[0] ?? `${import.meta.dir}/../../apps/gateway`);
const rounds = Number(args.rounds);

type PolicyModule = typeof import("../../apps/gateway/src/guardrails/policy");
type RunModule = typeof import("../../apps/gateway/src/guardrails/run");
type PivotModule = typeof import("../../apps/gateway/src/guardrails/pivot");
const { parseGuardrails } = (await import(`${dir}/src/guardrails/policy.ts`)) as PolicyModule;
const { GuardrailRun } = (await import(`${dir}/src/guardrails/run.ts`)) as RunModule;
// The streamed reply's reader (the `reply` surface), where this build has one.
const { StreamRestorer } = (await import(`${dir}/src/guardrails/pivot.ts`)) as PivotModule;

const problems: string[] = [];
const config = parseGuardrails(
  {
    policies: {
      default: { detect: ["email", "phone", "card", "iban", "ip", "secret", "national_id"], action: "redact" },
    },
  },
  problems,
);
if (problems.length) throw new Error(problems.join("\n"));
const policies = [...config.policies.values()];

// A paragraph of an agent's prompt: prose, a code excerpt, numbers, and one value of four kinds.
const PARAGRAPH = `Please review the change below and reply to dana.smith@example.com when done.
The service at 10.20.30.40 failed at 2026-11-28 10:30 with error code 50213 (build 4.2.1).
function total(items) { return items.reduce((n, i) => n + i.price * i.qty, 0); } // 3 cases
Refund the order to card 4111 1111 1111 1111; the ticket is #48213 and the SLA is 24 hours.
`;

function prompt(kb: number): string {
  let s = "";
  while (s.length < kb * 1024) s += PARAGRAPH;
  return s.slice(0, kb * 1024);
}

function cpuUs(f: () => void): number {
  const a = process.cpuUsage();
  f();
  const b = process.cpuUsage(a);
  return b.user + b.system;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

console.log(`guardrail cost per KB of prompt, policy: every built-in category, redact (${dir})`);
console.log("prompt KB | redact µs/KB | restore µs/KB | streamed reply µs/KB | values found");
for (const kb of [1, 10, 100]) {
  const text = prompt(kb);
  const reps = Math.max(1, Math.round(200 / kb));
  const redact: number[] = [];
  const restore: number[] = [];
  const streamed: number[] = [];
  let found = 0;
  for (let r = 0; r < rounds; r++) {
    let redacted = "";
    let run = new GuardrailRun(policies);
    redact.push(
      cpuUs(() => {
        for (let i = 0; i < reps; i++) {
          run = new GuardrailRun(policies);
          redacted = run.text(text, "prompt");
        }
      }) /
        reps /
        kb,
    );
    found = run.summary()?.counts.reduce((n, c) => n + c.n, 0) ?? 0;
    restore.push(
      cpuUs(() => {
        for (let i = 0; i < reps; i++) run.restoreText(redacted);
      }) /
        reps /
        kb,
    );
    // The same reply streamed in deltas of 16 characters (a few tokens each): read by the reply
    // policies (every category: the policy applies to replies by default) and restored.
    const deltas: string[] = [];
    for (let at = 0; at < redacted.length; at += 16) deltas.push(redacted.slice(at, at + 16));
    streamed.push(
      cpuUs(() => {
        for (let i = 0; i < reps; i++) {
          const r = new StreamRestorer(run);
          const sink = () => {};
          for (const text of deltas)
            r.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, sink);
          r.push({ type: "content_block_stop", index: 0 }, sink);
        }
      }) /
        reps /
        kb,
    );
  }
  console.log(
    `${kb} | ${median(redact).toFixed(1)} | ${median(restore).toFixed(1)} | ${median(streamed).toFixed(1)} | ${found}`,
  );
}
