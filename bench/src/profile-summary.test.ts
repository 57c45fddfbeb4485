import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { area, summarizeProfile, type CpuProfile } from "./profile-summary";

/** The repository root, wherever it is checked out: profile frame URLs are absolute paths under it. */
const ROOT = resolve(import.meta.dir, "../..");

const frame = (functionName: string, url = "", lineNumber = 0) => ({ functionName, url, lineNumber });

test("start-up samples are left out and native frames are charged to their JavaScript caller", () => {
  const gw = `${ROOT}/apps/gateway/src/pipeline/inference.ts`;
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 3] },
      {
        id: 2,
        callFrame: frame(
          "(module)",
          `${ROOT}/node_modules/.bun/gpt-tokenizer@3.4.0/node_modules/gpt-tokenizer/esm/x.js`,
        ),
        children: [4],
      },
      { id: 3, callFrame: frame("handleInference", gw, 97), children: [5] },
      { id: 4, callFrame: frame("parse") },
      { id: 5, callFrame: frame("fetch") },
    ],
    // 2 start-up samples (under "(module)"), 3 in fetch, 1 in handleInference itself.
    samples: [4, 4, 5, 5, 5, 3],
  };
  const s = summarizeProfile(profile);
  expect(s.startupSamples).toBe(2);
  expect(s.requestSamples).toBe(4);
  expect(s.top[0]).toEqual({ what: "fetch ← handleInference (pipeline/inference.ts:98)", share: 0.75 });
  expect(s.areas).toEqual([{ what: "gateway/pipeline", share: 1 }]);
});

test("areas name the package or the gateway folder", () => {
  expect(area(`${ROOT}/node_modules/.bun/elysia@1.4.30+ca81/node_modules/elysia/dist/compose.mjs`)).toBe("elysia");
  expect(
    area(`${ROOT}/node_modules/.bun/@sinclair+typebox@0.34.52/node_modules/@sinclair/typebox/build/esm/x.mjs`),
  ).toBe("@sinclair/typebox");
  expect(area(`${ROOT}/packages/schema/src/sse.ts`)).toBe("schema");
  expect(area(`${ROOT}/apps/gateway/src/storage/sqlite-store.ts`)).toBe("gateway/storage");
  expect(area("")).toBe("native");
});
