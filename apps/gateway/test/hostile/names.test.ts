/**
 * Names that are stored, logged and printed (key, team, user and admin token names, uploaded file
 * names, batch custom ids) are checked where they enter: a NUL, a control character (a terminal
 * escape) or 10,000 characters is a 400 in the caller's format, on SQLite and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_KEY, type Harness, startHarness } from "../harness";
import { ADMIN_KEY as SCALEOUT_ADMIN_KEY, type Instance, removeDir, startInstance } from "../scaleout/cluster";
import { freshDatabase, postgresUp } from "../scaleout/servers";
import { hasControlCharacter } from "../../src/storage/clean-text";

const BAD = {
  nul: "a\u0000b",
  escape: "red \u001b[31mteam",
  newline: "two\nlines",
  long: "n".repeat(10_000),
};

async function namesChecked(url: string, adminKey: string): Promise<void> {
  const admin = (path: string, method: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const refused = async (res: Response, field: string) => {
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; type: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain(field);
  };
  for (const [what, name] of Object.entries(BAD)) {
    // Keys, teams, users, admin tokens: the admin API's error.
    await refused(await admin("/admin/keys", "POST", { name }), "name");
    await refused(await admin("/admin/teams", "POST", { name }), "name");
    await refused(await admin("/admin/users", "POST", { email: `u-${what}@example.com`, name }), "name");
    await refused(await admin("/admin/tokens", "POST", { name, role: "admin" }), "name");
  }
  // A name of printable Unicode is kept as it was.
  const ok = await admin("/admin/teams", "POST", { name: "Équipe Ω — east" });
  expect(ok.status).toBe(201);
  const team = (await ok.json()) as { id: string; name: string };
  expect(team.name).toBe("Équipe Ω — east");
  await refused(await admin(`/admin/teams/${team.id}`, "PATCH", { name: BAD.escape }), "name");
  const made = await admin("/admin/keys", "POST", { name: "names" });
  expect(made.status).toBe(201);
  const { key, id } = (await made.json()) as { key: string; id: string };
  await refused(await admin(`/admin/keys/${id}`, "PATCH", { name: BAD.nul }), "name");

  // Uploaded files: the OpenAI-format error of the files API.
  const upload = (filename: string) => {
    const form = new FormData();
    form.set("purpose", "batch");
    form.set("file", new Blob(["{}\n"], { type: "application/jsonl" }), filename);
    return fetch(`${url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
  };
  // (A client's FormData writes a line break in a file name as %0A: that name is printable.)
  for (const name of [BAD.escape, "f".repeat(5000)]) await refused(await upload(name), "name");
  const good = await upload("input ü.jsonl");
  expect(good.status).toBe(200);
  expect(((await good.json()) as { filename: string }).filename).toBe("input ü.jsonl");

  // Batch custom ids: a line with a bad one is written off with its line number, not its id.
  const lines = [
    { custom_id: BAD.escape, method: "POST", url: "/v1/chat/completions", body: { model: "beta-5", messages: [] } },
    {
      custom_id: "x".repeat(600),
      method: "POST",
      url: "/v1/chat/completions",
      body: { model: "beta-5", messages: [] },
    },
  ];
  const form = new FormData();
  form.set("purpose", "batch");
  form.set("file", new Blob([lines.map((l) => JSON.stringify(l)).join("\n")]), "ids.jsonl");
  const file = (await (
    await fetch(`${url}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
  ).json()) as { id: string };
  const batch = await fetch(`${url}/v1/batches`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
  });
  expect(batch.status).toBe(200);
  const b = (await batch.json()) as { id: string };
  let done: { status: string; error_file_id: string | null } = { status: "", error_file_id: null };
  for (let i = 0; i < 400 && done.status !== "completed"; i++) {
    done = (await (
      await fetch(`${url}/v1/batches/${b.id}`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as typeof done;
    if (done.status !== "completed") await Bun.sleep(25);
  }
  expect(done.status).toBe("completed");
  const errors = (
    await (
      await fetch(`${url}/v1/files/${done.error_file_id}/content`, { headers: { authorization: `Bearer ${key}` } })
    ).text()
  )
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { custom_id: string; error: { message: string } });
  expect(errors.map((e) => e.custom_id)).toEqual(["line-1", "line-2"]);
  expect(errors[0]?.error.message).toContain("control character");
  expect(errors[1]?.error.message).toContain("longer than 512");
}

describe("names checked where they enter, on SQLite", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());
  test(
    "NUL, control characters and 10,000 characters: a 400 in the caller's format; printable Unicode kept",
    () => namesChecked(h.url, ADMIN_KEY),
    60_000,
  );
});

describe.skipIf(!postgresUp)("names checked where they enter, on PostgreSQL", () => {
  let instance: Instance;
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    db = await freshDatabase();
    instance = await startInstance({ TURNPIKE_DATABASE_URL: db.url });
  }, 90_000);
  afterAll(async () => {
    await instance.stop();
    removeDir(instance.journalDir);
    await db.drop();
  }, 30_000);
  test(
    "NUL, control characters and 10,000 characters: a 400 in the caller's format; printable Unicode kept",
    () => namesChecked(instance.url, SCALEOUT_ADMIN_KEY),
    90_000,
  );
});

describe("names where they are printed", () => {
  test("the CLI writes no control character to the terminal: JSON escaped, an error message's escaped too", async () => {
    const { runCli } = await import("../../src/cli");
    const run = async (answer: Response, argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(argv, {
        env: { TURNPIKE_URL: "http://gateway.invalid", TURNPIKE_ADMIN_KEY: "sk-admin" },
        fetch: Object.assign(async () => answer, { preconnect: fetch.preconnect }),
        out: (l: string) => out.push(l),
        err: (l: string) => err.push(l),
      });
      return { code, text: out.join("\n") + err.join("\n") };
    };
    // A name stored before names were checked, listed; and an error that carries one.
    const listed = await run(Response.json({ data: [{ id: "team_1", name: "red \u001b[31mteam\u0000" }] }), [
      "teams",
      "list",
    ]);
    expect(listed.code).toBe(0);
    expect(hasControlCharacter(listed.text.replaceAll("\n", ""))).toBe(false);
    expect(listed.text).toContain("red \\u001b[31mteam\\u0000");
    const refused = await run(
      Response.json(
        { error: { message: "no team \u001b]0;pwned\u0007 here", type: "invalid_request_error" } },
        { status: 400 },
      ),
      ["teams", "list"],
    );
    expect(refused.code).toBe(2);
    expect(hasControlCharacter(refused.text.replaceAll("\n", ""))).toBe(false);
    expect(refused.text).toContain("no team \\u001b]0;pwned\\u0007 here");
  });
});
