import gatewayPackage from "@turnpike/gateway/package.json" with { type: "json" };

/**
 * Turnpike's version: the gateway package's own (`apps/gateway/package.json`), which changesets
 * raise at each release (docs/operations.md "Releases"). Shown by `turnpike --version`, `GET
 * /health`, the first log line of a start and the image's `org.opencontainers.image.version` label.
 */
export const VERSION: string = gatewayPackage.version;
