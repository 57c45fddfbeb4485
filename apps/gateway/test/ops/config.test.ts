import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config/config";

describe("operations settings", () => {
  test("defaults: JSON logs at info, metrics open, no tracing", () => {
    expect(loadConfig({}).ops).toEqual({
      metricsKey: undefined,
      logLevel: "info",
      logFormat: "json",
      otlpEndpoint: undefined,
      serviceName: "turnpike",
    });
  });

  test("read from the environment", () => {
    const ops = loadConfig({
      TURNPIKE_METRICS_KEY: "m-key",
      TURNPIKE_LOG_LEVEL: "WARN",
      TURNPIKE_LOG_FORMAT: "pretty",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_SERVICE_NAME: "edge",
    }).ops;
    expect(ops).toEqual({
      metricsKey: "m-key",
      logLevel: "warn",
      logFormat: "pretty",
      otlpEndpoint: "http://collector:4318",
      serviceName: "edge",
    });
  });

  test("a wrong value stops start-up with a message that names the setting and the choices", () => {
    expect(() => loadConfig({ TURNPIKE_LOG_LEVEL: "verbose" })).toThrow(
      'TURNPIKE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    );
    expect(() => loadConfig({ TURNPIKE_LOG_FORMAT: "xml" })).toThrow("TURNPIKE_LOG_FORMAT must be one of json, pretty");
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(
      "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL",
    );
  });
});
