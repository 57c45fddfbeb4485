import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSimulator } from "@turnpike/simulator";
import { PEER_SCENARIOS, peerDir, peerRequest, peerServes, startPeerProcess } from "./peer";
import { preflight } from "./preflight";
import type { Service } from "./processes";
import { SCENARIOS, UPSTREAM_KEY } from "./scenarios";

const byName = (name: string) => SCENARIOS.find((s) => s.name === name)!;

test("every scenario the peer serves is a benchmark scenario", () => {
  const names = SCENARIOS.map((s) => s.name);
  for (const name of Object.keys(PEER_SCENARIOS)) expect(names).toContain(name);
  expect(SCENARIOS.filter(peerServes).map((s) => s.name)).toEqual([
    "messages passthrough",
    "chat passthrough",
    "chat→messages",
    "stream messages passthrough",
    "stream chat passthrough",
    "stream chat→messages",
  ]);
});

test("a peer request names the vendor, points it at the simulator and carries the vendor's key in the vendor's header", () => {
  const chat = peerRequest(byName("stream chat passthrough"), "http://127.0.0.1:9")!;
  expect(chat.path).toBe("/v1/chat/completions");
  expect(chat.headers).toEqual({
    "content-type": "application/json",
    "x-portkey-provider": "openai",
    "x-portkey-custom-host": "http://127.0.0.1:9/v1",
    authorization: `Bearer ${UPSTREAM_KEY}`,
  });
  expect(chat.body).toBe(byName("stream chat passthrough").gateway.body);
  expect(chat.stream).toBe(true);

  const translated = peerRequest(byName("chat→messages"), "http://127.0.0.1:9")!;
  expect(translated.path).toBe("/v1/chat/completions");
  expect(translated.headers["x-portkey-provider"]).toBe("anthropic");
  expect(translated.headers["x-api-key"]).toBe(UPSTREAM_KEY);
  expect(translated.headers.authorization).toBeUndefined();
});

test("the scenarios the peer does not serve have no peer request", () => {
  for (const name of ["messages→chat", "messages→generateContent", "responses→chat", "stream messages→chat"])
    expect(peerRequest(byName(name), "http://127.0.0.1:9")).toBeUndefined();
});

// Needs the peer's package (a bench dependency); skipped by name when it is not installed.
describe.skipIf(peerDir() === undefined)("the peer gateway, installed", () => {
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  let peer: Service;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    peer = await startPeerProcess(0);
  });
  afterAll(async () => {
    await peer?.stop();
    await sim?.stop();
  });

  for (const name of Object.keys(PEER_SCENARIOS)) {
    test(`answers "${name}" from the simulator in the client's format`, async () => {
      const s = byName(name);
      expect(await preflight(peer.url, peerRequest(s, sim.url)!, s.gateway.format)).toBeUndefined();
    });
  }
});
