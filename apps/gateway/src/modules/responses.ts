import { Elysia } from "elysia";
import type { GatewayDeps } from "../deps";
import { FORMATS } from "../formats";
import { handleInference } from "../pipeline/inference";

/** `POST /v1/responses`, the Responses format. */
export const responsesModule = (deps: GatewayDeps) =>
  new Elysia({ name: "module.responses" }).post("/v1/responses", ({ request, server }) => handleInference(deps, request, FORMATS.responses, server), {
    parse: "none",
  });
