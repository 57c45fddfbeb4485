import { Elysia } from "elysia";
import type { GatewayDeps } from "../deps";
import { FORMATS } from "../formats";
import { handleCountTokens } from "../pipeline/count-tokens";
import { handleInference } from "../pipeline/inference";

/**
 * `POST /v1/messages` and `POST /v1/messages/count_tokens`, the messages format; and `HEAD /`,
 * the connectivity check that coding agents of this format make against their base URL before
 * the first call (answered without a key: it tells only that something is listening).
 */
export const messagesModule = (deps: GatewayDeps) =>
  new Elysia({ name: "module.messages" })
    .head("/", () => new Response(null, { status: 200 }))
    .post("/v1/messages", ({ request, server }) => handleInference(deps, request, FORMATS.messages, server), { parse: "none" })
    .post("/v1/messages/count_tokens", ({ request, server }) => handleCountTokens(deps, request, server), { parse: "none" });
