/** The upstream protocols of the conformance table, each through one catalog model. */

export type UpstreamProtocol = "messages" | "chat" | "generate" | "responses";
export type ClientFormat = "messages" | "chat" | "responses";
/** The client formats of the table: the three above, and generateContent (its model and kind of reply in the path). */
export type TableClient = ClientFormat | "generate";

export interface Upstream {
  /** Column label in the README table. */
  label: string;
  model: string;
  protocol: UpstreamProtocol;
  /** The id shape of the tool calls a client sees from this upstream. */
  toolId: RegExp;
}

export const ALPHA: Upstream = {
  label: "messages",
  model: "alpha-haiku-4-5",
  protocol: "messages",
  toolId: /^toolu_sim\d+_\d+$/,
};
export const BETA: Upstream = { label: "chat", model: "beta-5", protocol: "chat", toolId: /^call_sim\d+_\d+$/ };
/** Gemini sends calls without ids; Turnpike names them `toolu_…` (packages/providers README). */
export const GAMMA: Upstream = {
  label: "generateContent",
  model: "gamma-3-flash",
  protocol: "generate",
  toolId: /^toolu_[A-Za-z0-9]{16,}$/,
};
/** A chat-completions-compatible vendor, for a few cells. */
export const DELTA: Upstream = {
  label: "chat (delta)",
  model: "delta-m3",
  protocol: "chat",
  toolId: /^call_sim\d+_\d+$/,
};

/**
 * A vendor that speaks the Responses API, added by the config file `responses-vendor.json` (no
 * built-in vendor speaks it): served by the simulator, like the built-in ones without a key.
 */
export const EPSILON: Upstream = {
  label: "Responses",
  model: "epsilon-5",
  protocol: "responses",
  toolId: /^call_sim\d+_\d+$/,
};
/** The gateway settings that add {@link EPSILON}. */
export const RESPONSES_VENDOR_ENV = { TURNPIKE_CONFIG: `${import.meta.dir}/responses-vendor.json` };

/** The upstreams and client formats of the older cells (official clients, interrupted streams). */
export const UPSTREAMS: readonly Upstream[] = [ALPHA, BETA, GAMMA];
export const CLIENTS: readonly ClientFormat[] = ["messages", "chat"];
/** The whole table: every client format × every upstream protocol. */
export const TABLE_UPSTREAMS: readonly Upstream[] = [...UPSTREAMS, EPSILON];
export const TABLE_CLIENTS: readonly TableClient[] = [...CLIENTS, "responses", "generate"];

/** The path a client format posts to. */
export const CLIENT_PATH: Record<ClientFormat, string> = {
  messages: "/v1/messages",
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
};

/** The path a table client posts to: generateContent names the model (URL-encoded) and the kind of reply there. */
export function tableClientPath(client: TableClient, model: string, stream: boolean): string {
  if (client !== "generate") return CLIENT_PATH[client];
  return `/v1beta/models/${encodeURIComponent(model)}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`;
}

/** The simulator path an upstream call must have gone to. */
export function upstreamPath(up: Upstream, stream: boolean): string {
  switch (up.protocol) {
    case "messages":
      return "/v1/messages";
    case "chat":
      return "/v1/chat/completions";
    case "generate":
      return stream
        ? `/v1beta/models/${up.model}:streamGenerateContent?alt=sse`
        : `/v1beta/models/${up.model}:generateContent`;
    case "responses":
      return "/v1/responses";
    default: {
      const never: never = up.protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}
