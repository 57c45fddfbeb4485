import { describe, expect, test } from "bun:test";
import { checkGraph, roomOf, TIERS, type Tier } from "../../../scripts/check-imports";

/**
 * The import check (scripts/check-imports.ts) over made-up file graphs: what it refuses is what
 * keeps the gateway's folders in tiers (docs/design.md, "Tiers of folders").
 */
describe("import check: folder tiers", () => {
  test("a concern may import the request tier and the database layer", () => {
    const graph = {
      "limits/admit.ts": ["request/context.ts", "storage/store.ts", "vocabulary/format.ts", "limits/limiter-store.ts"],
      "request/context.ts": ["vocabulary/format.ts"],
      "storage/store.ts": [],
      "limits/limiter-store.ts": [],
      "vocabulary/format.ts": [],
    };
    expect(checkGraph(graph)).toEqual([]);
  });

  test("a concern that imports GatewayDeps climbs to the wiring tier and is refused", () => {
    const graph = {
      "limits/admit.ts": ["wiring/deps.ts"],
      "wiring/deps.ts": ["limits/limiter-store.ts"],
      "limits/limiter-store.ts": [],
    };
    const problems = checkGraph(graph);
    expect(problems).toContain("climbs: limits/admit.ts (concerns) → wiring/deps.ts (wiring)");
    // The same import closes a loop of folders, named with the imports that make it.
    expect(problems).toContain(
      "folder loop: limits, wiring (limits/admit.ts → wiring/deps.ts; wiring/deps.ts → limits/limiter-store.ts)",
    );
  });

  test("the database layer may not import a concern's store", () => {
    expect(checkGraph({ "storage/store.ts": ["teams/team-store.ts"], "teams/team-store.ts": [] })).toEqual([
      "climbs: storage/store.ts (foundations) → teams/team-store.ts (concerns)",
    ]);
  });

  test("two folders of one tier that import each other are a loop, though neither climbs", () => {
    const graph = {
      "limits/admit.ts": ["metering/inflight.ts"],
      "metering/meter.ts": ["limits/admit.ts"],
      "metering/inflight.ts": [],
    };
    expect(checkGraph(graph)).toEqual([
      "folder loop: limits, metering (limits/admit.ts → metering/inflight.ts; metering/meter.ts → limits/admit.ts)",
    ]);
  });

  test("a folder no tier names is refused once, so a new folder is placed on purpose", () => {
    expect(checkGraph({ "gadgets/a.ts": ["vocabulary/format.ts"], "gadgets/b.ts": [] })).toEqual([
      "no tier: gadgets (add it to TIERS in scripts/check-imports.ts)",
    ]);
  });

  test("a file directly in src is a room of its own: boot may import wiring, wiring may not import boot", () => {
    const tiers: Tier[] = [
      { name: "wiring", rooms: ["wiring"] },
      { name: "boot", rooms: ["boot.ts"] },
    ];
    expect(roomOf("boot.ts")).toBe("boot.ts");
    expect(checkGraph({ "boot.ts": ["wiring/deps.ts"], "wiring/deps.ts": [] }, tiers)).toEqual([]);
    expect(checkGraph({ "wiring/deps.ts": ["boot.ts"], "boot.ts": [] }, tiers)).toEqual([
      "climbs: wiring/deps.ts (wiring) → boot.ts (boot)",
    ]);
  });

  test("an import outside src is refused, a workspace package's build is not", () => {
    expect(checkGraph({ "http/route.ts": ["../test/support/x.ts", "../../../packages/schema/dist/index.js"] })).toEqual(
      ["outside src: http/route.ts → ../test/support/x.ts"],
    );
  });

  test("every room is on exactly one tier", () => {
    const rooms = TIERS.flatMap((t) => t.rooms);
    expect(new Set(rooms).size).toBe(rooms.length);
  });
});
