/**
 * The Kubernetes manifests: up to date with their source, each object valid against the
 * Kubernetes schema (kubernetes-models' validators, built from the Kubernetes OpenAPI document),
 * and each layout doing what an operator relies on — probes on /health and /ready, a grace
 * period longer than the drain, secrets read from a Secret, state on volumes, resource requests,
 * a disruption budget that selects the replicas. When kubectl is installed, its Kustomize renders
 * each overlay too and must give the same objects.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { StatefulSet } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Service } from "kubernetes-models/v1";
import { PrometheusRule, ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import { parse, parseAllDocuments } from "yaml";
import { files } from "../kubernetes/generate";
import { CONFIG_FILE, DRAIN_SECONDS, IMAGE, PORT } from "../kubernetes/manifests";

const ROOT = join(import.meta.dir, "../kubernetes");

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

/** The schema of each kind the manifests may hold: any other kind fails the test. */
const MODELS: Record<string, new (o: never) => { validate(): void }> = {
  "v1/ConfigMap": ConfigMap,
  "v1/Service": Service,
  "apps/v1/StatefulSet": StatefulSet,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule,
};

/**
 * What `kubectl apply -k <dir>` applies: the resources its kustomization lists, a directory's in
 * turn. The kustomizations use nothing but `resources` (checked here), so this is all of it.
 */
function render(dir: string): K8sObject[] {
  const k = parse(readFileSync(join(dir, "kustomization.yaml"), "utf8")) as Record<string, unknown>;
  expect(Object.keys(k).sort()).toEqual(["apiVersion", "kind", "resources"]);
  const out: K8sObject[] = [];
  for (const r of k.resources as string[]) {
    const path = resolve(dir, r);
    if (statSync(path).isDirectory()) out.push(...render(path));
    else out.push(...parseAllDocuments(readFileSync(path, "utf8")).map((d) => d.toJS() as K8sObject));
  }
  return out;
}

interface Probe {
  httpGet: { path: string; port: string };
}
interface Container {
  image: string;
  ports: { name: string; containerPort: number }[];
  securityContext: { allowPrivilegeEscalation: boolean; capabilities: { drop: string[] } };
  env: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }[];
  envFrom: { configMapRef: { name: string } }[];
  startupProbe: Probe;
  livenessProbe: Probe;
  readinessProbe: Probe;
  lifecycle: { preStop: { exec: { command: string[] } } };
  resources: { requests: { cpu: string; memory: string } };
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    terminationGracePeriodSeconds: number;
    containers: Container[];
    securityContext: { runAsNonRoot: boolean; seccompProfile: { type: string } };
    volumes: { name: string; configMap?: { name: string } }[];
  };
}

const statefulSet = (objects: K8sObject[]) => {
  const s = objects.find((o) => o.kind === "StatefulSet");
  if (!s?.spec) throw new Error("no StatefulSet");
  return s.spec as {
    replicas: number;
    template: PodTemplate;
    volumeClaimTemplates: { metadata: { name: string } }[];
    selector: { matchLabels: Record<string, string> };
  };
};
const envOf = (c: Container, name: string) => c.env.find((e) => e.name === name);
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

describe("the Kubernetes manifests", () => {
  test("the committed files are what generate.ts writes", () => {
    for (const [path, text] of Object.entries(files())) expect(readFileSync(join(ROOT, path), "utf8")).toBe(text);
  });

  for (const overlay of ["single", "replicated"]) {
    describe(`overlays/${overlay}`, () => {
      const objects = render(join(ROOT, "overlays", overlay));

      test("every object is valid against the Kubernetes schema, and none is a Secret", () => {
        expect(objects.length).toBeGreaterThan(3);
        for (const o of objects) {
          const Model = MODELS[`${o.apiVersion}/${o.kind}`];
          expect(Model).toBeDefined();
          expect(() => new (Model as new (o: K8sObject) => { validate(): void })(o).validate()).not.toThrow();
        }
        expect(objects.filter((o) => o.kind === "Secret")).toEqual([]);
      });

      test("probes on /health and /ready, a grace period longer than the drain, resource requests", () => {
        const { template } = statefulSet(objects);
        const c = template.spec.containers[0]!;
        expect(c.startupProbe.httpGet.path).toBe("/health");
        expect(c.livenessProbe.httpGet.path).toBe("/health");
        expect(c.readinessProbe.httpGet.path).toBe("/ready");
        const cm = objects.find(
          (o) => o.kind === "ConfigMap" && c.envFrom.some((e) => e.configMapRef.name === o.metadata.name),
        );
        const drain = Number(cm?.data?.TURNPIKE_DRAIN_SECONDS);
        expect(drain).toBe(DRAIN_SECONDS);
        const preStop = Number(c.lifecycle.preStop.exec.command.at(-1));
        expect(template.spec.terminationGracePeriodSeconds).toBeGreaterThan(preStop + drain);
        expect(c.resources.requests.cpu).toBeTruthy();
        expect(c.resources.requests.memory).toBeTruthy();
      });

      test("the admin key and vendor keys come from a Secret; the Services select the pods", () => {
        const { template, selector } = statefulSet(objects);
        const c = template.spec.containers[0]!;
        expect(envOf(c, "TURNPIKE_ADMIN_KEY")?.valueFrom?.secretKeyRef).toEqual({
          name: "turnpike",
          key: "admin-key",
          optional: false,
        });
        expect(envOf(c, "BETA_API_KEY")?.valueFrom?.secretKeyRef?.optional).toBe(true);
        expect(c.env.filter((e) => /KEY|URL/.test(e.name) && e.value !== undefined)).toEqual([]);
        expect(matches(selector.matchLabels, template.metadata.labels)).toBe(true);
        for (const s of objects.filter((o) => o.kind === "Service"))
          expect(matches((s.spec as { selector: Record<string, string> }).selector, template.metadata.labels)).toBe(
            true,
          );
      });

      test("seccomp RuntimeDefault, non-root, no privilege escalation, every capability dropped", () => {
        const { template } = statefulSet(objects);
        expect(template.spec.securityContext.seccompProfile).toEqual({ type: "RuntimeDefault" });
        expect(template.spec.securityContext.runAsNonRoot).toBe(true);
        const c = template.spec.containers[0]!;
        expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
        expect(c.securityContext.capabilities.drop).toEqual(["ALL"]);
      });

      test("the config file: a ConfigMap's key, mounted read-only where TURNPIKE_CONFIG points", () => {
        const { template } = statefulSet(objects);
        const c = template.spec.containers[0]!;
        const path = envOf(c, "TURNPIKE_CONFIG")?.value ?? "";
        const mount = c.volumeMounts.find((m) => path.startsWith(`${m.mountPath}/`));
        expect(mount?.readOnly).toBe(true);
        const volume = template.spec.volumes.find((v) => v.name === mount?.name);
        const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === volume?.configMap?.name);
        const key = path.slice((mount?.mountPath.length ?? 0) + 1);
        expect(key).toBe(CONFIG_FILE.key);
        // A YAML object with the file's sections (the gateway's own test loads it: apps/gateway/test/ops/kubernetes-config.test.ts).
        expect(parse(cm?.data?.[key] ?? "")).toEqual({ models: [], vendors: {} });
      });

      test("scrape annotations name the container's port and /metrics; the image is the documented reference", () => {
        const { template } = statefulSet(objects);
        const c = template.spec.containers[0]!;
        const a = template.metadata.annotations;
        expect(a["prometheus.io/scrape"]).toBe("true");
        expect(a["prometheus.io/path"]).toBe("/metrics");
        expect(Number(a["prometheus.io/port"])).toBe(c.ports.find((p) => p.name === "http")?.containerPort ?? -1);
        expect(Number(a["prometheus.io/port"])).toBe(PORT);
        expect(c.image).toBe(IMAGE);
        expect(c.image).toMatch(/^[a-z0-9.-]+\/[a-z0-9/_-]+:[\w.-]+$/);
        expect(envOf(c, "TURNPIKE_METRICS_KEY")?.valueFrom?.secretKeyRef).toEqual({
          name: "turnpike",
          key: "metrics-key",
          optional: true,
        });
      });

      if (overlay === "single") {
        test("one replica, its SQLite file and journal on a volume claimed per pod", () => {
          const { replicas, template, volumeClaimTemplates } = statefulSet(objects);
          expect(replicas).toBe(1);
          const c = template.spec.containers[0]!;
          const mount = c.volumeMounts.find((m) => volumeClaimTemplates.some((v) => v.metadata.name === m.name));
          expect(envOf(c, "TURNPIKE_DB")?.value?.startsWith(`${mount?.mountPath}/`)).toBe(true);
          expect(envOf(c, "TURNPIKE_DATABASE_URL")).toBeUndefined();
        });
      } else {
        test("several replicas on PostgreSQL and Redis from the Secret, each journal on its own volume, a disruption budget", () => {
          const { replicas, template, volumeClaimTemplates } = statefulSet(objects);
          expect(replicas).toBeGreaterThan(1);
          const c = template.spec.containers[0]!;
          expect(envOf(c, "TURNPIKE_DATABASE_URL")?.valueFrom?.secretKeyRef).toEqual({
            name: "turnpike",
            key: "database-url",
            optional: false,
          });
          expect(envOf(c, "TURNPIKE_REDIS_URL")?.valueFrom?.secretKeyRef).toEqual({
            name: "turnpike",
            key: "redis-url",
            optional: false,
          });
          const mount = c.volumeMounts.find((m) => volumeClaimTemplates.some((v) => v.metadata.name === m.name));
          expect(envOf(c, "TURNPIKE_JOURNAL_DIR")?.value?.startsWith(`${mount?.mountPath}/`)).toBe(true);
          const pdb = objects.find((o) => o.kind === "PodDisruptionBudget")?.spec as {
            maxUnavailable: number;
            selector: { matchLabels: Record<string, string> };
          };
          expect(pdb.maxUnavailable).toBeLessThan(replicas);
          expect(matches(pdb.selector.matchLabels, template.metadata.labels)).toBe(true);
        });
      }

      const kubectl = Bun.which("kubectl");
      test.skipIf(!kubectl)(`kubectl kustomize renders overlays/${overlay} to the same objects`, () => {
        const p = Bun.spawnSync([kubectl ?? "kubectl", "kustomize", join(ROOT, "overlays", overlay)], {
          stdout: "pipe",
          stderr: "pipe",
        });
        expect(p.stderr.toString()).toBe("");
        const key = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;
        const theirs = parseAllDocuments(p.stdout.toString()).map((d) => d.toJS() as K8sObject);
        const sort = (l: K8sObject[]) => [...l].sort((a, b) => key(a).localeCompare(key(b)));
        expect(sort(theirs)).toEqual(sort(objects));
      });
    });
  }
});

describe("monitoring/ (for the Prometheus Operator)", () => {
  const objects = render(join(ROOT, "monitoring"));
  const base = render(join(ROOT, "base"));

  test("a ServiceMonitor and a PrometheusRule, each valid against its schema", () => {
    expect(objects.map((o) => o.kind).sort()).toEqual(["PrometheusRule", "ServiceMonitor"]);
    for (const o of objects) {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      expect(() => new (Model as new (o: K8sObject) => { validate(): void })(o).validate()).not.toThrow();
    }
  });

  test("the ServiceMonitor selects exactly one Service, the headless one, by a port it has", () => {
    const sm = objects.find((o) => o.kind === "ServiceMonitor")?.spec as {
      selector: { matchLabels: Record<string, string> };
      endpoints: { port: string; path: string }[];
    };
    const chosen = base.filter(
      (o) => o.kind === "Service" && matches(sm.selector.matchLabels, o.metadata.labels ?? {}),
    );
    // One target per pod: scraping through both Services would count every pod twice.
    expect(chosen.map((o) => o.metadata.name)).toEqual(["turnpike-pods"]);
    const ports = ((chosen[0]?.spec as { ports?: { name: string }[] } | undefined)?.ports ?? []).map((p) => p.name);
    expect(sm.endpoints.map((e) => [ports.includes(e.port), e.path])).toEqual([[true, "/metrics"]]);
  });

  test("the PrometheusRule holds deploy/monitoring/turnpike.rules.yml's groups as they are", () => {
    const rule = objects.find((o) => o.kind === "PrometheusRule")?.spec as { groups: unknown };
    const file = parse(readFileSync(join(ROOT, "../monitoring/turnpike.rules.yml"), "utf8")) as { groups: unknown };
    expect(rule.groups).toEqual(file.groups);
  });
});

test("no committed file under deploy/kubernetes holds a secret value", () => {
  for (const path of Object.keys(files())) {
    const text = readFileSync(join(ROOT, path), "utf8");
    expect(text).not.toMatch(/sk-[a-z]|postgres:\/\/|redis:\/\/|kind: Secret/);
  }
  expect(existsSync(join(ROOT, "secret.yaml"))).toBe(false);
});
