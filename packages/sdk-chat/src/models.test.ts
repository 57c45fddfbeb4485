import { describe, expect, test } from "bun:test";
import { BASE, useMockGateway } from "../test/use-mock-gateway.js";
import { ModelNotFoundError } from "./index.js";

const { turnpike, client } = useMockGateway();

describe("models", () => {
  test("list() goes to {base}/v1/models and parses the shared entry shape", async () => {
    const page = await client().models.list();
    const beta = page.data.find((m) => m.id === "beta-5");
    expect(beta).toMatchObject({ object: "model", owned_by: "beta" });
    expect(typeof beta?.created).toBe("number");
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/models`);
    const ids: string[] = [];
    for await (const m of client().models.list()) ids.push(m.id);
    expect(ids).toEqual(page.data.map((m) => m.id));
  });

  test("retrieve() gets one model; an unknown one is a ModelNotFoundError", async () => {
    expect((await client().models.retrieve("gamma-3-pro")).id).toBe("gamma-3-pro");
    expect(turnpike.lastRequest()?.url).toBe(`${BASE}/v1/models/gamma-3-pro`);
    await expect(client().models.retrieve("gamma-0")).rejects.toBeInstanceOf(ModelNotFoundError);
  });

  test("validate() names the id and the key's models", async () => {
    turnpike.setModels(["beta-5"]);
    expect((await client().models.validate("beta-5")).id).toBe("beta-5");
    await expect(client().models.validate("beta-55")).rejects.toThrow(
      'Model "beta-55" is not available to this API key. Models this key can use: beta-5.',
    );
    turnpike.setModels([]);
    await expect(client().models.validate("beta-5")).rejects.toThrow("This key can use no models.");
  });
});
