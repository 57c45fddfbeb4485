import { describe, expect, test } from "bun:test";
import { applyTeamRules, defaultsProblem, withinList } from "./key-ceilings";
import type { Team } from "./team-store";

const NOW = Date.UTC(2026, 0, 1);
const team = (t: Partial<Team>): Team => ({
  id: "team_x",
  name: "x",
  models: null,
  rpm: null,
  tpm: null,
  budget_usd: null,
  created_at: "",
  updated_at: "",
  ...t,
});
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as { param?: string }).param;
  }
  return undefined;
};

describe("withinList", () => {
  test("a name within a granted glob; a glob only within an equal or wider prefix glob", () => {
    expect(withinList(["docs__read_file"], ["docs__read_*"])).toBe(true);
    expect(withinList(["docs__read_*"], ["docs__*"])).toBe(true);
    expect(withinList(["docs__*"], ["*"])).toBe(true);
    expect(withinList(["docs__*"], ["docs__read_*"])).toBe(false);
    expect(withinList(["*"], ["docs__*"])).toBe(false);
    // A glob that reads like a narrower one is not within a name that matches its text.
    expect(withinList(["docs__*_file"], ["docs__read_file"])).toBe(false);
    expect(withinList(["docs__read_file", "web__get"], ["docs__*"])).toBe(false);
  });
});

describe("applyTeamRules", () => {
  test("defaults fill, then the ceiling; an admin is not bounded", () => {
    const t = team({ key_defaults: { rpm: 5 }, key_ceilings: { rpm: 10, budget_usd: 2, lifetime_days: 1 } });
    expect(applyTeamRules({ name: "k" }, t, true, NOW)).toEqual({
      name: "k",
      rpm: 5,
      budget_usd: 2,
      expires_at: new Date(NOW + 86_400_000).toISOString(),
    });
    expect(applyTeamRules({ name: "k", rpm: 500 }, t, false, NOW)).toEqual({ name: "k", rpm: 500 });
    expect(refusal(() => applyTeamRules({ name: "k", rpm: 11 }, t, true, NOW))).toBe("rpm");
    expect(refusal(() => applyTeamRules({ name: "k", budget_usd: null }, t, true, NOW))).toBe("budget_usd");
  });

  test("tools need a grant: the ceiling's, else the team's own list", () => {
    expect(refusal(() => applyTeamRules({ name: "k", tools: ["*"] }, team({}), true, NOW))).toBe("tools");
    expect(applyTeamRules({ name: "k", tools: [] }, team({}), true, NOW).tools).toEqual([]);
    expect(applyTeamRules({ name: "k", tools: ["docs__*"] }, team({ tools: ["docs__*"] }), true, NOW).tools).toEqual([
      "docs__*",
    ]);
  });

  test("defaults past the ceilings are named", () => {
    expect(defaultsProblem({ models: ["beta-*"] }, { models: ["alpha-*"] })).toBe("models");
    expect(defaultsProblem({ lifetime_days: 30 }, { lifetime_days: 7 })).toBe("lifetime_days");
    expect(defaultsProblem({ rpm: 5 }, { rpm: 10 })).toBeUndefined();
  });
});
