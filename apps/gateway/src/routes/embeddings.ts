import type { GatewayDeps } from "../wiring/deps";
import type { Route } from "../http/route";
import { errors, INFERENCE_KEYS, json, ok, ref } from "../openapi/operations";
import { handleEmbeddings } from "../embeddings/handle-embeddings";

/** `POST /v1/embeddings`: vectors from a catalog embedding model, in the chat family's shape. */
export function embeddingsRoutes(deps: GatewayDeps): Route[] {
  return [
    {
      method: "POST",
      path: "/v1/embeddings",
      direct: true,
      doc: {
        tags: ["Embeddings"],
        summary: "Create embeddings",
        description:
          'Vectors for a string, an array of strings, token ids or arrays of token ids, from an embedding model of the catalog (`GET /v1/models` marks them `embeds: true`). `dimensions` shortens the vectors; `encoding_format: base64` sends each as little-endian float32 bytes; `task_type` (a Turnpike extension) is carried to upstreams that take one. Routed over the model\'s deployments and fallbacks like the inference routes (`x-turnpike-model`, `x-turnpike-deployment`, `x-turnpike-attempts`, `x-turnpike-fallback-from`). Metered per input token (`endpoint: "embeddings"`).',
        security: INFERENCE_KEYS,
        requestBody: { required: true, content: json(ref("EmbeddingsRequest")) },
        responses: { ...ok("The vectors, in input order.", ref("EmbeddingsResponse")), ...errors("ChatErrorBody") },
      },
      handle: ({ request, server }) => handleEmbeddings(deps, request, server),
    },
  ];
}
