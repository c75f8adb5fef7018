/**
 * deploy/: every kustomize overlay rendered (kubectl kustomize) and every object validated offline against the
 * Kubernetes and prometheus-operator schemas (npm kubernetes-models), the security settings every pod must keep,
 * the selectors that tie the DaemonSet, Service, PodMonitor and scrape config together, and the PrometheusRule kept
 * equal to the plain rules file.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { hasTool } from "../support/processes.ts";

const DEPLOY = join(import.meta.dir, "../../deploy");
const K8S = join(DEPLOY, "kubernetes");
const HAVE_KUBECTL = hasTool(["kubectl", "kustomize", "--help"], /kustomiz/i);
if (!HAVE_KUBECTL) console.warn("manifest rendering skipped: kubectl (with its built-in kustomize) is not installed");

const Obj = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional(), labels: z.record(z.string(), z.string()).optional() }),
});
type Obj = z.infer<typeof Obj>;

const Container = z.looseObject({
  name: z.string(),
  args: z.array(z.string()).optional(),
  ports: z.array(z.looseObject({ name: z.string().optional(), containerPort: z.number() })).optional(),
  resources: z.looseObject({ requests: z.object({ cpu: z.string(), memory: z.string() }) }),
  securityContext: z.looseObject({
    allowPrivilegeEscalation: z.literal(false),
    readOnlyRootFilesystem: z.literal(true),
    capabilities: z.object({ drop: z.tuple([z.literal("ALL")]) }).strict(),
  }),
});
const PodSpec = z.looseObject({
  hostNetwork: z.boolean().optional(),
  automountServiceAccountToken: z.literal(false),
  securityContext: z.looseObject({ runAsNonRoot: z.literal(true), runAsUser: z.literal(65532) }),
  containers: z.array(Container).min(1),
});
const Workload = z.looseObject({
  spec: z.looseObject({ template: z.looseObject({ metadata: z.looseObject({ labels: z.record(z.string(), z.string()) }), spec: PodSpec }) }),
});

// Each model's constructor takes its own typed shape; the data is unknown YAML until validate() has checked it.
type Validator = new (data: never) => { validate(): void };
const MODELS: Record<string, () => Promise<Validator>> = {
  "v1/Namespace": async () => (await import("kubernetes-models/v1/Namespace")).Namespace,
  "v1/Service": async () => (await import("kubernetes-models/v1/Service")).Service,
  "v1/ConfigMap": async () => (await import("kubernetes-models/v1/ConfigMap")).ConfigMap,
  "apps/v1/DaemonSet": async () => (await import("kubernetes-models/apps/v1/DaemonSet")).DaemonSet,
  "apps/v1/Deployment": async () => (await import("kubernetes-models/apps/v1/Deployment")).Deployment,
  "batch/v1/Job": async () => (await import("kubernetes-models/batch/v1/Job")).Job,
  "monitoring.coreos.com/v1/PodMonitor": async () =>
    (await import("@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor")).PodMonitor,
  "monitoring.coreos.com/v1/PrometheusRule": async () =>
    (await import("@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule")).PrometheusRule,
};

async function validate(o: Obj): Promise<void> {
  const model = MODELS[`${o.apiVersion}/${o.kind}`];
  if (!model) throw new Error(`no schema for ${o.apiVersion} ${o.kind}: add it to MODELS`);
  new (await model())(o as never).validate();
}

function render(dir: string): Obj[] {
  const r = Bun.spawnSync(["kubectl", "kustomize", join(K8S, dir)], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`kubectl kustomize ${dir}: ${r.stderr.toString()}`);
  const docs = Bun.YAML.parse(r.stdout.toString());
  return z.array(Obj).parse(Array.isArray(docs) ? docs : [docs]);
}

const one = (objs: Obj[], kind: string): Obj => {
  const found = objs.filter((o) => o.kind === kind);
  expect(found).toHaveLength(1);
  return found[0]!;
};
const yamlFile = (path: string): unknown => Bun.YAML.parse(readFileSync(path, "utf8"));

const OVERLAYS = ["base", "overlays/host-network", "overlays/prometheus-operator", "fleet-test/all-pairs", "fleet-test/one-to-many"];

describe.skipIf(!HAVE_KUBECTL)("deploy/kubernetes renders and validates", () => {
  for (const dir of OVERLAYS) {
    test(`${dir}: every object passes its schema, lives in namespace anyperf, and every pod runs locked down`, async () => {
      const objs = render(dir);
      expect(objs.length).toBeGreaterThan(0);
      for (const o of objs) {
        await validate(o);
        if (o.kind !== "Namespace") expect(o.metadata.namespace).toBe("anyperf");
        expect(o.metadata.labels?.["app.kubernetes.io/part-of"]).toBe("anyperf");
        if (o.kind === "DaemonSet" || o.kind === "Job" || o.kind === "Deployment") Workload.parse(o);
      }
    });
  }

  test("the validator rejects a broken object (so the passes above mean something)", async () => {
    const ds = structuredClone(one(render("base"), "DaemonSet")) as Obj & { spec: { template: { spec: { containers: { ports: { containerPort: unknown }[] }[] } } } };
    ds.spec.template.spec.containers[0]!.ports[0]!.containerPort = "http";
    await expect(validate(ds)).rejects.toThrow(/containerPort must be integer/);
  });

  test("the DaemonSet serves /metrics on 9100 with the token from a file; the headless Service selects its pods", () => {
    const objs = render("base");
    const ds = Workload.parse(one(objs, "DaemonSet"));
    const pod = ds.spec.template.spec;
    expect(pod.hostNetwork).toBeUndefined();
    const args = pod.containers[0]!.args!;
    expect(args.slice(0, 3)).toEqual(["serve", "--http", "0.0.0.0:9100"]);
    expect(args[args.indexOf("--http-token-file") + 1]).toBe("/var/run/anyperf/token");
    expect(pod.containers[0]!.ports!.find((p) => p.name === "http")?.containerPort).toBe(9100);
    const svc = z.looseObject({ spec: z.looseObject({ clusterIP: z.literal("None"), selector: z.record(z.string(), z.string()) }) }).parse(one(objs, "Service"));
    for (const [k, v] of Object.entries(svc.spec.selector)) expect(ds.spec.template.metadata.labels[k]).toBe(v);
  });

  test("the Service names every port the serve pods listen on, UDP ones included (its SRV records list them)", () => {
    const objs = render("base");
    const Port = z.looseObject({ name: z.string(), protocol: z.enum(["TCP", "UDP"]) });
    const ds = z
      .looseObject({ spec: z.looseObject({ template: z.looseObject({ spec: z.looseObject({ containers: z.array(z.looseObject({ ports: z.array(Port.extend({ containerPort: z.number() })) })) }) }) }) })
      .parse(one(objs, "DaemonSet"));
    const svc = z.looseObject({ spec: z.looseObject({ ports: z.array(Port.extend({ port: z.number() })) }) }).parse(one(objs, "Service"));
    const served = svc.spec.ports.map((p) => `${p.name} ${p.port}/${p.protocol}`).sort();
    const listened = ds.spec.template.spec.containers[0]!.ports.map((p) => `${p.name} ${p.containerPort}/${p.protocol}`).sort();
    expect(served).toEqual(listened);
    expect(served).toContain("iperf3-udp 5201/UDP");
    expect(served).toContain("iperf-udp 5001/UDP");
  });

  test("the host-network overlay changes only the network: host stack, cluster DNS, no capability added", () => {
    const ds = Workload.parse(one(render("overlays/host-network"), "DaemonSet"));
    expect(ds.spec.template.spec.hostNetwork).toBe(true);
    expect(ds.spec.template.spec["dnsPolicy"]).toBe("ClusterFirstWithHostNet");
    const base = Workload.parse(one(render("base"), "DaemonSet"));
    expect(ds.spec.template.spec.containers).toEqual(base.spec.template.spec.containers);
  });

  test("the PodMonitor selects the serve pods' http port with the token Secret and labels targets by node", () => {
    const objs = render("overlays/prometheus-operator");
    const ds = Workload.parse(one(objs, "DaemonSet"));
    const pm = z
      .looseObject({
        spec: z.looseObject({
          selector: z.object({ matchLabels: z.record(z.string(), z.string()) }),
          podMetricsEndpoints: z.array(z.looseObject({ port: z.string(), authorization: z.looseObject({ credentials: z.object({ name: z.string(), key: z.string() }) }), relabelings: z.array(z.looseObject({ sourceLabels: z.array(z.string()), targetLabel: z.string() })) })),
        }),
      })
      .parse(one(objs, "PodMonitor"));
    for (const [k, v] of Object.entries(pm.spec.selector.matchLabels)) expect(ds.spec.template.metadata.labels[k]).toBe(v);
    const ep = pm.spec.podMetricsEndpoints[0]!;
    expect(ds.spec.template.spec.containers[0]!.ports!.map((p) => p.name)).toContain(ep.port);
    expect(ep.authorization.credentials).toEqual({ name: "anyperf-http-token", key: "token" });
    expect(ep.relabelings).toContainEqual({ sourceLabels: ["__meta_kubernetes_pod_node_name"], targetLabel: "node" });
  });

  test("the PrometheusRule holds exactly the groups of deploy/prometheus/anyperf.rules.yml", () => {
    const rule = z.looseObject({ spec: z.object({ groups: z.array(z.unknown()) }) }).parse(one(render("overlays/prometheus-operator"), "PrometheusRule"));
    const plain = z.object({ groups: z.array(z.unknown()) }).parse(yamlFile(join(DEPLOY, "prometheus/anyperf.rules.yml")));
    expect(rule.spec.groups).toEqual(plain.groups);
  });

  test("the plain Kubernetes scrape job keeps the same pods and port the DaemonSet names", () => {
    const ds = Workload.parse(one(render("base"), "DaemonSet"));
    const cfg = z
      .object({ scrape_configs: z.array(z.looseObject({ relabel_configs: z.array(z.looseObject({ source_labels: z.array(z.string()), regex: z.string().optional(), action: z.string().optional() })) })) })
      .parse(yamlFile(join(K8S, "prometheus-scrape-config.yml")));
    const keep = cfg.scrape_configs[0]!.relabel_configs.find((r) => r.action === "keep")!;
    expect(keep.source_labels).toEqual(["__meta_kubernetes_pod_label_app_kubernetes_io_name", "__meta_kubernetes_pod_container_port_name"]);
    const [name, port] = keep.regex!.split(";");
    expect(ds.spec.template.metadata.labels["app.kubernetes.io/name"]).toBe(name!);
    expect(ds.spec.template.spec.containers[0]!.ports!.map((p) => p.name)).toContain(port!);
  });

  test("the fleet Jobs mount a plan ConfigMap holding the runner and the overlay's plan, one pod per node", () => {
    for (const dir of ["fleet-test/all-pairs", "fleet-test/one-to-many"]) {
      const objs = render(dir);
      const cm = z.looseObject({ metadata: z.looseObject({ name: z.string() }), data: z.object({ "run-plan.sh": z.string(), "plan.txt": z.string() }) }).parse(one(objs, "ConfigMap"));
      expect(cm.data["run-plan.sh"]).toBe(readFileSync(join(K8S, "fleet-test/base/run-plan.sh"), "utf8"));
      expect(cm.data["plan.txt"]).toBe(readFileSync(join(K8S, dir, "plan.txt"), "utf8"));
      const job = z
        .looseObject({
          spec: z.looseObject({
            completionMode: z.literal("Indexed"),
            completions: z.number(),
            parallelism: z.number(),
            template: z.looseObject({ spec: z.looseObject({ volumes: z.array(z.looseObject({ configMap: z.object({ name: z.string() }).optional() })), affinity: z.looseObject({ podAntiAffinity: z.unknown() }) }) }),
          }),
        })
        .parse(one(objs, "Job"));
      expect(job.spec.completions).toBe(job.spec.parallelism);
      expect(job.spec.template.spec.volumes.map((v) => v.configMap?.name)).toContain(cm.metadata.name);
      expect(job.spec.template.spec.affinity.podAntiAffinity).toBeDefined();
      // Every pair's figures go to the Pushgateway the fleet test brings, by its Service's name and port.
      const env = z.array(z.looseObject({ name: z.string(), value: z.string().optional() })).parse((Workload.parse(job).spec.template.spec.containers[0] as { env?: unknown }).env);
      const svc = z.looseObject({ metadata: z.looseObject({ name: z.string() }), spec: z.looseObject({ ports: z.array(z.looseObject({ port: z.number() })) }) }).parse(objs.find((o) => o.kind === "Service" && o.metadata.name.includes("pushgateway")));
      expect(env.find((e) => e.name === "ANYPERF_PUSHGATEWAY")?.value).toBe(`http://${svc.metadata.name}:${svc.spec.ports[0]!.port}`);
      expect(objs.some((o) => o.kind === "Deployment" && o.metadata.name === svc.metadata.name)).toBe(true);
    }
  });
});
