import { createHandler } from "./create-handler";
import type { Simulator, SimulatorOptions } from "./simulator-options";

/**
 * Starts the fake vendor upstreams on one origin (Bun.serve). Base URLs: alpha `url`, beta and
 * delta `url + "/v1"`, gamma `url`.
 *
 * @example
 * const sim = await startSimulator({ port: 0 });
 * // … point the gateway's ALPHA_BASE_URL at sim.url …
 * await sim.stop();
 */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const handler = createHandler(opts);
  const hostname = opts.hostname ?? "127.0.0.1";
  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname,
    // Slow replies (latency, first_byte) must never hit Bun's idle cut (10 s by default,
    // docs/protocols.md §4.9 #17); a fake upstream needs no idle protection, so it is off.
    idleTimeout: 0,
    fetch: handler.handle,
  });
  const port = server.port ?? 0;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    url: `http://${host}:${port}`,
    port,
    requests: handler.requests,
    fault: (key, fault) => handler.faults.set(key, fault),
    clearFaults: () => handler.faults.clear(),
    stop: () => server.stop(true),
  };
}
