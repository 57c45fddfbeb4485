/** The version of the API this gateway serves, as its description document and its MCP server name it. */
export const API_VERSION = "1.0.0";
