/** The README's conformance table shows exactly the cells this folder runs (none it does not). */
import { expect, test } from "bun:test";
import { conformanceTable } from "./readme-table";

test("README.md § Translation conformance holds the table of the scenarios run here", async () => {
  const readme = await Bun.file(new URL("../../../../README.md", import.meta.url)).text();
  expect(readme).toContain("## Translation conformance");
  expect(readme).toContain(conformanceTable());
});
