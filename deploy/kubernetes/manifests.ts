/**
 * Turnpike on Kubernetes, as typed objects (kubernetes-models: a misspelt field is a compile
 * error, a wrong value a schema error). `generate.ts` writes them out as a Kustomize base and two
 * overlays; `deploy/test/kubernetes.test.ts` checks them. site/operations/kubernetes.md "Kubernetes" says how to install.
 */
import { ConfigMap, type IContainer, type IEnvVar, type IPersistentVolumeClaim, type IPodSpec, Service } from "kubernetes-models/v1";
import { StatefulSet } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { PrometheusRule, ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";

export const NAME = "turnpike";
export const LABELS = { "app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "gateway" };
/**
 * The image: a PLACEHOLDER for where releases are to be published (none is yet). Build and push
 * your own (site/operations/containers.md "Containers") and point your overlay at it, e.g.
 * `kustomize edit set image ghcr.io/turnpike-gateway/turnpike=registry.example/turnpike:TAG`.
 */
export const IMAGE = "ghcr.io/turnpike-gateway/turnpike:0.1.0";
/** The config file (site/guide/configuration.md "Config file"): a ConfigMap's key, mounted read-only, named by `TURNPIKE_CONFIG`. */
export const CONFIG_FILE = { configMap: `${NAME}-config`, key: "turnpike.yaml", dir: "/etc/turnpike" } as const;
/** The label of the Service the ServiceMonitor scrapes through: the headless one, one target per pod. */
export const SCRAPE_LABEL = { "turnpike.dev/scrape": "true" };
/** The port the image listens on (`PORT` in the Dockerfile). */
export const PORT = 8080;
/**
 * For a Prometheus that discovers pods by annotation (the common `kubernetes-pods` job). It sends
 * no token: with `metrics-key` set, scrape through the ServiceMonitor instead.
 */
export const SCRAPE_ANNOTATIONS = { "prometheus.io/scrape": "true", "prometheus.io/port": String(PORT), "prometheus.io/path": "/metrics" };
/** Seconds open streams may run on after SIGTERM (`TURNPIKE_DRAIN_SECONDS`). */
export const DRAIN_SECONDS = 30;
/**
 * Seconds the pod waits before the gateway is told to stop: endpoints are removed from Services
 * while SIGTERM is sent, so new connections may still arrive for a moment.
 */
export const PRE_STOP_SECONDS = 5;
/** The kubelet kills the pod this long after it began stopping: the wait, the drain, and room to flush the ledger. */
export const GRACE_SECONDS = PRE_STOP_SECONDS + DRAIN_SECONDS + 15;
/** The Secret the operator creates (site/operations/kubernetes.md "Kubernetes"); never part of these manifests. */
export const SECRET = NAME;

/** Settings shared by both layouts (no secret among them). */
export function config(): ConfigMap {
  return new ConfigMap({
    metadata: { name: NAME, labels: LABELS },
    data: { TURNPIKE_DRAIN_SECONDS: String(DRAIN_SECONDS), TURNPIKE_LOG_LEVEL: "info", HOST: "0.0.0.0", PORT: String(PORT) },
  });
}

/**
 * The config file, empty of changes: the built-in catalog and vendors as they are. Replace its
 * `turnpike.yaml` in your overlay; the gateway reads it at start (restart the pods after a change).
 */
export function configFile(): ConfigMap {
  return new ConfigMap({
    metadata: { name: CONFIG_FILE.configMap, labels: LABELS },
    data: {
      [CONFIG_FILE.key]:
        '# Turnpike\'s config file (site/guide/configuration.md "Config file"): models, vendors and routing laid over the built-in ones.\nmodels: []\nvendors: {}\n',
    },
  });
}

/** The address clients use, and the headless one that names each replica (and that Prometheus scrapes through). */
export function services(): Service[] {
  const ports = [{ name: "http", port: 80, targetPort: "http" }];
  return [
    new Service({ metadata: { name: NAME, labels: LABELS }, spec: { selector: LABELS, ports } }),
    new Service({ metadata: { name: `${NAME}-pods`, labels: { ...LABELS, ...SCRAPE_LABEL } }, spec: { clusterIP: "None", selector: LABELS, ports, publishNotReadyAddresses: true } }),
  ];
}

/**
 * For the Prometheus Operator: a ServiceMonitor scraping each pod's `/metrics` through the
 * headless Service, and the alert rules of deploy/monitoring/turnpike.rules.yml as a PrometheusRule.
 * With `metrics-key` set in the Secret, add `authorization: { credentials: { name: turnpike, key: metrics-key } }`
 * to the endpoint (site/operations/kubernetes.md "Kubernetes").
 */
export function serviceMonitor(): ServiceMonitor {
  return new ServiceMonitor({
    metadata: { name: NAME, labels: LABELS },
    spec: {
      selector: { matchLabels: { ...LABELS, ...SCRAPE_LABEL } },
      endpoints: [{ port: "http", path: "/metrics", interval: "30s" }],
    },
  });
}

export function prometheusRule(groups: unknown): PrometheusRule {
  return new PrometheusRule({ metadata: { name: NAME, labels: LABELS }, spec: { groups: groups as never } });
}

const fromSecret = (name: string, key: string, optional = false): IEnvVar => ({ name, valueFrom: { secretKeyRef: { name: SECRET, key, optional } } });

/** Vendor keys: each optional (an unset vendor is served by the built-in simulator). */
const VENDOR_KEYS = ["ALPHA", "BETA", "GAMMA", "DELTA"].map((v) => fromSecret(`${v}_API_KEY`, `${v.toLowerCase()}-api-key`, true));

function container(env: IEnvVar[], dataPath: string, volume: string): IContainer {
  return {
    name: "gateway",
    image: IMAGE,
    imagePullPolicy: "IfNotPresent",
    ports: [{ name: "http", containerPort: PORT }],
    envFrom: [{ configMapRef: { name: NAME } }],
    env: [
      fromSecret("TURNPIKE_ADMIN_KEY", "admin-key"),
      // Set it to have /metrics ask for a bearer token (the ServiceMonitor must then send it).
      fromSecret("TURNPIKE_METRICS_KEY", "metrics-key", true),
      ...VENDOR_KEYS,
      { name: "TURNPIKE_CONFIG", value: `${CONFIG_FILE.dir}/${CONFIG_FILE.key}` },
      ...env,
    ],
    // /health: the process serves (restart it if not); /ready: its store and Redis answer and it is not draining.
    startupProbe: { httpGet: { path: "/health", port: "http" }, periodSeconds: 2, failureThreshold: 30 },
    livenessProbe: { httpGet: { path: "/health", port: "http" }, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: "/ready", port: "http" }, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 2 },
    lifecycle: { preStop: { exec: { command: ["sleep", String(PRE_STOP_SECONDS)] } } },
    resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { memory: "1Gi" } },
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
    volumeMounts: [
      { name: volume, mountPath: dataPath },
      { name: "config", mountPath: CONFIG_FILE.dir, readOnly: true },
    ],
  };
}

function podSpec(c: IContainer): IPodSpec {
  return {
    terminationGracePeriodSeconds: GRACE_SECONDS,
    // The image's unprivileged `bun` user; fsGroup makes the volume writable by it.
    // The container runtime's default seccomp filter (the "restricted" Pod Security Standard asks for it).
    securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: "RuntimeDefault" } },
    containers: [c],
    volumes: [{ name: "config", configMap: { name: CONFIG_FILE.configMap } }],
  };
}

function claim(name: string, size: string): Omit<IPersistentVolumeClaim, "apiVersion" | "kind"> {
  return { metadata: { name }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: size } } } };
}

/** One replica on SQLite: the database file and the usage journal on one volume. */
export function single(): StatefulSet {
  const c = container([{ name: "TURNPIKE_DB", value: "/data/turnpike.db" }, { name: "TURNPIKE_JOURNAL_DIR", value: "/data/journal" }], "/data", "data");
  return new StatefulSet({
    metadata: { name: NAME, labels: LABELS },
    spec: {
      // SQLite has one writer: never two pods, not even during an update.
      replicas: 1,
      serviceName: `${NAME}-pods`,
      selector: { matchLabels: LABELS },
      template: { metadata: { labels: LABELS, annotations: SCRAPE_ANNOTATIONS }, spec: podSpec(c) },
      volumeClaimTemplates: [claim("data", "5Gi")],
    },
  });
}

/** N replicas on PostgreSQL and Redis, each with its own usage journal on its own volume. */
export function replicated(replicas = 3): StatefulSet {
  const c = container(
    [
      fromSecret("TURNPIKE_DATABASE_URL", "database-url"),
      fromSecret("TURNPIKE_REDIS_URL", "redis-url"),
      { name: "TURNPIKE_REDIS_FAIL", value: "open" },
      { name: "TURNPIKE_JOURNAL_DIR", value: "/data/journal" },
    ],
    "/data",
    "journal",
  );
  return new StatefulSet({
    metadata: { name: NAME, labels: LABELS },
    spec: {
      replicas,
      // Replicas share nothing locally: start and stop them together, not one by one.
      podManagementPolicy: "Parallel",
      serviceName: `${NAME}-pods`,
      selector: { matchLabels: LABELS },
      template: {
        metadata: { labels: LABELS, annotations: SCRAPE_ANNOTATIONS },
        spec: {
          ...podSpec(c),
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "ScheduleAnyway", labelSelector: { matchLabels: LABELS } }],
        },
      },
      // A journal holds usage not yet in PostgreSQL: it must outlive its pod (a restarted replica replays it).
      volumeClaimTemplates: [claim("journal", "1Gi")],
    },
  });
}

/** At most one replica down at a time for voluntary disruptions (node drains, upgrades). */
export function disruptionBudget(): PodDisruptionBudget {
  return new PodDisruptionBudget({ metadata: { name: NAME, labels: LABELS }, spec: { maxUnavailable: 1, selector: { matchLabels: LABELS } } });
}
