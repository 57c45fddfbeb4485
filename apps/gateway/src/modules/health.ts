import { Elysia } from "elysia";

/** `GET /health`: the process is up and serving. */
export const healthModule = new Elysia({ name: "module.health" }).get("/health", () => ({ status: "ok" }));
