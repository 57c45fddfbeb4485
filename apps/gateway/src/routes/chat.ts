import { Elysia } from "elysia";
import type { GatewayDeps } from "../deps";
import { FORMATS } from "../formats";
import { handleInference } from "../pipeline/inference";

/** `POST /v1/chat/completions`, the chat completions format. */
export const chatModule = (deps: GatewayDeps) =>
  new Elysia({ name: "module.chat" }).post("/v1/chat/completions", ({ request, server }) => handleInference(deps, request, FORMATS.chat, server), {
    parse: "none",
  });
