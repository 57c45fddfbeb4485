/** The user guide's conformance table (site/reference/translation.md) shows exactly the cells this folder runs (none it does not). */
import { expect, test } from "bun:test";
import { conformanceTable } from "./readme-table";

test("the user guide's Translation conformance page holds the table of the scenarios run here", async () => {
  const readme = await Bun.file(new URL("../../../../site/reference/translation.md", import.meta.url)).text();
  expect(readme).toContain("# Translation conformance");
  expect(readme).toContain(conformanceTable());
});
