/**
 * The deployment files of docs/deployment.md stay true: the systemd units pass `systemd-analyze
 * verify`; the HAProxy configuration passes `haproxy -c` and keeps the settings `ward cluster up`
 * runs with; the Kubernetes layout probes /livez and /readyz, its Services and PodDisruptionBudgets
 * select its pods, its drain outlasts the readiness probe and fits the termination grace, and its
 * ConfigMaps and Secrets load through Ward's own settings parsers (a misspelt or unknown name fails),
 * and every pod runs the Containerfile's image as its user with a read-only root file system, writing
 * only to the volumes it mounts at the data paths its settings name.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConsoleConfig, ConsoleConfigSchema } from '../../src/console/console-config.ts';
import { ConfigSchema, loadConfig } from '../../src/core/config.ts';
import { MeshConfigSchema, loadMeshConfig } from '../../src/mesh/mesh-config.ts';
import { haproxyConfig } from '../../src/service/cluster-up.ts';
import { DEPLOY, PACKAGE, manifests, named, podsOf } from '../helpers/deploy-files.ts';

const SYSTEMD_ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((path) => existsSync(path));
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));

describe('deployment files', () => {
  test('the systemd units pass systemd-analyze verify', { skip: SYSTEMD_ANALYZE ? false : 'systemd-analyze is not installed: the units are not checked' }, (t) => {
    if (!existsSync('/usr/bin/node')) return t.skip('the units start /usr/bin/node, which this machine does not have');
    const dir = mkdtempSync(join(tmpdir(), 'ward-units-'));
    try {
      // A template is verified as one of its instances.
      copyFileSync(join(DEPLOY, 'systemd', 'ward-registry@.service'), join(dir, 'ward-registry@8081.service'));
      for (const unit of ['ward-gateway.service', 'ward-console.service']) copyFileSync(join(DEPLOY, 'systemd', unit), join(dir, unit));
      const units = ['ward-registry@8081.service', 'ward-gateway.service', 'ward-console.service'];
      const result = spawnSync(SYSTEMD_ANALYZE as string, ['verify', ...units], { cwd: dir, encoding: 'utf8' });
      // Anything it says about our units (an unknown key, a bad value, a missing executable) is a failure.
      const ours = `${result.stdout}${result.stderr}`.split('\n').filter((line) => /ward-(registry|gateway|console)/.test(line));
      assert.deepEqual(ours, [], `${result.stdout}${result.stderr}`);
      assert.equal(result.status, 0, result.stderr);
      t.diagnostic(`systemd-analyze verify: ${units.join(', ')} clean`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the HAProxy configuration is valid and is the one `ward cluster up` runs, but for its addresses", { skip: HAPROXY ? false : 'haproxy is not installed' }, () => {
    const file = join(DEPLOY, 'haproxy', 'haproxy.cfg');
    const checked = spawnSync(HAPROXY as string, ['-c', '-f', file], { encoding: 'utf8' });
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
    const settings = (text: string) =>
      text
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#') && !/^(bind|server|stats socket) /.test(line));
    const generated = haproxyConfig(8080, ['10.0.0.11:8080'], { statsSocket: '/run/haproxy/ward.sock' });
    assert.deepEqual(settings(readFileSync(file, 'utf8')), settings(generated));
  });

  test('the Kubernetes layout: probes, selectors, drain and grace, rolling without a gap', () => {
    const all = manifests();
    for (const deployment of all.filter((manifest) => manifest.kind === 'Deployment')) {
      const name = deployment.metadata.name;
      const labels = deployment.spec.template.metadata.labels;
      assert.deepEqual(deployment.spec.selector.matchLabels, { 'app.kubernetes.io/name': name }, name);
      assert.equal(labels['app.kubernetes.io/name'], name);
      const [container] = deployment.spec.template.spec.containers;
      assert.equal(container.livenessProbe.httpGet.path, '/livez', name);
      assert.equal(container.readinessProbe.httpGet.path, '/readyz', name);
      const service = named(all, 'Service', name);
      assert.deepEqual(service.spec.selector, deployment.spec.selector.matchLabels, `the Service ${name} selects its pods`);
    }
    const registry = named(all, 'Deployment', 'ward-registry');
    assert.deepEqual(registry.spec.strategy.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 });
    const pdb = named(all, 'PodDisruptionBudget', 'ward-registry');
    assert.deepEqual(pdb.spec.selector.matchLabels, registry.spec.selector.matchLabels);
    assert.equal(pdb.spec.maxUnavailable, 1);
    // The drain outlasts the time the readiness probe needs to fail, and drain + grace fit the termination grace.
    const settings = named(all, 'ConfigMap', 'ward-registry-settings').data;
    const probe = registry.spec.template.spec.containers[0].readinessProbe;
    const drainMs = Number(settings.REGISTRY_SHUTDOWN_DRAIN_MS);
    assert.ok(drainMs > probe.periodSeconds * probe.failureThreshold * 1000, `drain ${drainMs} ms`);
    assert.ok(drainMs + Number(settings.REGISTRY_SHUTDOWN_GRACE_MS) < registry.spec.template.spec.terminationGracePeriodSeconds * 1000);
  });

  test("the ConfigMaps and Secrets hold only settings Ward knows, and load through Ward's own parsers", () => {
    const all = manifests();
    const data = (kind: string, name: string): Record<string, string> => {
      const manifest = named(all, kind, name);
      return kind === 'Secret' ? manifest.stringData : manifest.data;
    };
    const known = (schema: { properties: Record<string, unknown> }, env: Record<string, string>, what: string) => {
      for (const key of Object.keys(env)) assert.ok(key in schema.properties, `${what}: ${key} is not a setting`);
    };
    const registryEnv = { ...data('ConfigMap', 'ward-registry-settings'), ...data('Secret', 'ward-registry-secrets') };
    known(ConfigSchema, registryEnv, 'registry');
    // The key-encryption key is the mounted Secret's file; here a key of the same form stands in for it.
    const pod = named(all, 'Deployment', 'ward-registry').spec.template.spec;
    const mount = pod.containers[0].volumeMounts.find((volume: { name: string }) => volume.name === 'key-encryption-key');
    const secretKey = Object.keys(data('Secret', pod.volumes.find((volume: { name: string }) => volume.name === 'key-encryption-key').secret.secretName))[0];
    assert.equal(registryEnv.REGISTRY_KEY_ENCRYPTION_KEY_FILE, `${mount.mountPath}/${secretKey}`, 'the setting names the mounted file');
    const dir = mkdtempSync(join(tmpdir(), 'ward-kek-'));
    writeFileSync(join(dir, 'kek'), randomBytes(32).toString('base64'));
    let registry;
    try {
      registry = loadConfig({ ...registryEnv, REGISTRY_KEY_ENCRYPTION_KEY_FILE: join(dir, 'kek') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(registry.REGISTRY_ENV, 'production');
    assert.equal(registry.REGISTRY_SHUTDOWN_DRAIN_MS, 8000);
    const consoleEnv = data('ConfigMap', 'ward-console-settings');
    known(ConsoleConfigSchema, consoleEnv, 'console');
    assert.equal(loadConsoleConfig(consoleEnv).REGISTRY_URL, 'http://ward-registry:8080');
    const gatewayEnv = { ...data('ConfigMap', 'ward-gateway-settings'), ...data('Secret', 'ward-gateway-secrets') };
    known(MeshConfigSchema, gatewayEnv, 'gateway');
    assert.equal(loadMeshConfig(gatewayEnv).GATEWAY_PORT, 8100);
    // Every ConfigMap and Secret a pod reads is in the layout.
    for (const deployment of all.filter((manifest) => ['Deployment', 'Job'].includes(manifest.kind))) {
      const container = deployment.spec.template.spec.containers[0];
      for (const source of container.envFrom ?? []) {
        if (source.configMapRef) named(all, 'ConfigMap', source.configMapRef.name);
        if (source.secretRef) named(all, 'Secret', source.secretRef.name);
      }
    }
  });

  test("every pod runs the Containerfile's image, as its non-root user, on a read-only root file system", () => {
    const all = manifests();
    const user = Number(readFileSync(join(DEPLOY, '..', 'Containerfile'), 'utf8').match(/^USER (\d+):(\d+)$/m)?.[1]);
    assert.equal(user, 10001, "the Containerfile's USER");
    const pods = podsOf(all);
    assert.deepEqual(pods.map((pod) => pod.name).sort(), ['ward-console', 'ward-gateway', 'ward-migrate', 'ward-registry']);
    for (const { name, pod } of pods) {
      assert.equal(pod.securityContext.runAsNonRoot, true, name);
      assert.equal(pod.securityContext.runAsUser, user, `${name} runs as the image's user`);
      assert.equal(pod.securityContext.runAsGroup, user, name);
      for (const container of pod.containers) {
        // The tag scheme of docs/deployment.md: <registry>/ward:<package.json version>.
        assert.equal(container.image, `registry.example.org/ward:${PACKAGE.version}`, `${name}: the image of this version`);
        assert.deepEqual(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } }, name);
        assert.ok(['registry', 'gateway', 'console', 'migrate'].includes(container.args[0]), `${name}: ward ${container.args[0]}`);
      }
    }
    assert.deepEqual(named(all, 'Job', 'ward-migrate').spec.template.spec.containers[0].args, ['migrate']);
    // Each data path a pod's settings name is a mounted volume: the root file system takes no write.
    const registry = named(all, 'Deployment', 'ward-registry').spec.template.spec.containers[0];
    const dataDir = registry.env.find((variable: { name: string }) => variable.name === 'REGISTRY_DATA_DIR').value;
    assert.ok(registry.volumeMounts.some((mount: { mountPath: string }) => mount.mountPath === dataDir), 'the registry mounts REGISTRY_DATA_DIR');
    const meshDir = named(all, 'ConfigMap', 'ward-gateway-settings').data.MESH_DATA_DIR;
    assert.ok(named(all, 'Deployment', 'ward-gateway').spec.template.spec.containers[0].volumeMounts.some((mount: { mountPath: string }) => mount.mountPath === meshDir), 'the gateway mounts MESH_DATA_DIR');
  });

  test('every pod that reads the registry settings mounts the key-encryption key file they name', () => {
    // The migrate Job read ward-registry-settings, whose REGISTRY_KEY_ENCRYPTION_KEY_FILE it did not mount: `ward migrate` stopped on it.
    const all = manifests();
    const file = named(all, 'ConfigMap', 'ward-registry-settings').data.REGISTRY_KEY_ENCRYPTION_KEY_FILE as string;
    const readers = podsOf(all).filter(({ pod }) => pod.containers[0].envFrom?.some((source: any) => source.configMapRef?.name === 'ward-registry-settings'));
    assert.deepEqual(readers.map((reader) => reader.name).sort(), ['ward-migrate', 'ward-registry']);
    for (const { name, pod } of readers) {
      const mount = pod.containers[0].volumeMounts?.find((candidate: { mountPath: string }) => file.startsWith(`${candidate.mountPath}/`));
      assert.ok(mount, `${name} mounts ${file}`);
      const volume = pod.volumes.find((candidate: { name: string }) => candidate.name === mount.name);
      assert.equal(volume.secret.secretName, 'ward-key-encryption-key', name);
      assert.ok(file.endsWith(`/${Object.keys(named(all, 'Secret', 'ward-key-encryption-key').stringData)[0]}`), name);
    }
  });
});
