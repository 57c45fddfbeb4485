import { createHandler } from "./create-handler";
import type { CapturedRequest, SimulatorOptions } from "./simulator-options";

/** A `fetch` served by the simulator in-process, with the requests it received. */
export type SimulatorFetch = typeof fetch & { requests: CapturedRequest[] };

/**
 * The simulator's routes as a `fetch`-compatible function, for unit tests without a socket. Any
 * origin works: only the path, query, headers and body are read.
 *
 * @example
 * const fetch = createSimulatorFetch();
 * const res = await fetch("http://sim/v1/chat/completions", { method: "POST", headers: { authorization: "Bearer k" }, body });
 */
export function createSimulatorFetch(opts: SimulatorOptions = {}): SimulatorFetch {
  const handler = createHandler(opts);
  const fn = (input: RequestInfo | URL, init?: RequestInit) => handler.handle(new Request(input, init));
  return Object.assign(fn, { preconnect: () => {}, requests: handler.requests });
}
