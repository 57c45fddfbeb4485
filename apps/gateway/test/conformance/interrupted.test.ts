/**
 * An upstream stream that breaks off — a clean EOF without its terminator, or a broken
 * connection (simulator `midstream_error=close` / `=reset`) — must reach the client as an
 * interrupted stream: the text so far, then the in-band error of its format, and no
 * `message_stop` / `finish_reason`, so that no client takes a cut-off reply (or half a tool
 * call) for a complete one (packages/providers README "Interrupted streams"; decisions/0002).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../harness";
import { callStream } from "./calls";
import { CLIENTS, UPSTREAMS } from "./upstreams";

let h: Harness;
beforeAll(async () => {
  // The stream as it ends with no continuation behind it (continuation: test/continuation).
  h = await startHarness({ TURNPIKE_CONFIG: `${import.meta.dir}/no-continuation.json` });
});
afterAll(async () => {
  await h.close();
});

const CUT = "one two three four five six seven eight";

for (const mode of ["close", "reset"] as const) {
  describe(`midstream_error=${mode}`, () => {
    for (const up of UPSTREAMS) {
      for (const client of CLIENTS) {
        test(`${client} client ← ${up.label} upstream (${up.model})`, async () => {
          const body = {
            model: up.model,
            ...(client === "messages" ? { max_tokens: 100 } : {}),
            messages: [{ role: "user", content: `Say it. [sim text="${CUT}" chunks=4 midstream_error=${mode}]` }],
          };
          const s = await callStream(h, client, body);
          // The readers have checked that the error is the last event and that no finish came.
          expect(s.error?.type).toBe(client === "messages" ? "api_error" : "server_error");
          expect(s.outcome.text).toBe("one two three four");
          expect(s.outcome.stop).toBeNull();
        });
      }
    }
  });
}
