// The Kustomize manifests: every overlay renders with `kubectl kustomize`; every rendered object validates
// against the Kubernetes schemas (kubernetes-models); `kubectl apply -k` installs the HA overlay (and the alert
// rules) into a simulated management cluster; and least privilege — the simulated cluster enforces the rendered
// RBAC for poolscope's ServiceAccount token while the collector, a resync and leader election run on it: a
// missing rule fails, an unused rule is reported (and fails too).

import { execFile, execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { imageEnv, imageNodeFlags, imagePreload, localLibrary } from '@/bench/image';
import { buildResyncService } from '@/server/actions';
import { LeaderElector } from '@/server/collector/leader';
import { parseEnv } from '@/server/env';
import { harness, until } from '@/server/testing/sim-harness';
import { policyFromRbac, type PolicyRule } from '@/sim/kube/auth';

const DEPLOY = import.meta.dirname;
// Asynchronous: the simulated cluster answers kubectl from this same process.
const run = promisify(execFile);
const OVERLAYS = ['base', 'overlays/readonly', 'overlays/resync', 'overlays/ha', 'overlays/oauth2-proxy'];
const SA = 'system:serviceaccount:poolscope:poolscope';

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
}

function render(dir: string): K8sObject[] {
  const out = execFileSync('kubectl', ['kustomize', path.join(DEPLOY, dir)], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJS() as K8sObject);
}

/** The kubernetes-models class for an object's apiVersion and kind. */
async function model(o: K8sObject): Promise<new (data: unknown) => { validate(): void }> {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const spec = `kubernetes-models/${group ? `${group}/` : ''}${version}/${o.kind}`;
  const mod = (await import(/* @vite-ignore */ spec)) as Record<string, unknown>;
  const cls = (mod[o.kind] ?? mod.default) as (new (data: unknown) => { validate(): void }) | undefined;
  if (!cls) throw new Error(`kubernetes-models has no ${o.apiVersion} ${o.kind}`);
  return cls;
}

it('the schema validation bites: a malformed Deployment is rejected', async () => {
  const bad: K8sObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x' },
    spec: { replicas: 'two', selector: {}, template: {} },
  };
  const M = await model(bad);
  expect(() => new M(bad).validate()).toThrow();
});

describe('the image', () => {
  it('runs server.js with the Node flags its CMD names, which the server benchmark reads from it', () => {
    expect(imageNodeFlags()).toEqual(
      expect.arrayContaining([
        '--no-allocation-site-pretenuring',
        '--heap-growing-percent=20',
        '--max-semi-space-size=8',
      ]),
    );
    expect(imageNodeFlags('FROM x\nCMD ["node", "--a", "--b=1", "server.js"]\n')).toEqual(['--a', '--b=1']);
    // The shell form, another entry point, or none: said, not guessed at.
    expect(() => imageNodeFlags('CMD node server.js\n')).toThrow(
      /expected a line CMD \["node", <flags>…, "server.js"\], found "CMD node server.js"/,
    );
    expect(() => imageNodeFlags('CMD ["node", "other.js"]\n')).toThrow(/expected a line CMD/);
    expect(() => imageNodeFlags('FROM x\n')).toThrow(/found no CMD line/);
  });

  it("preloads jemalloc as its malloc, by a path the server benchmark maps to this machine's copy", () => {
    expect(imagePreload()).toBe('libjemalloc.so.2');
    expect(imagePreload('FROM x\nENV LD_PRELOAD="/opt/lib/libx.so"\n')).toBe('libx.so');
    expect(imagePreload('FROM x\n')).toBeNull();
    expect(() => imagePreload('ENV LD_PRELOAD=/a.so\nENV LD_PRELOAD=/b.so\n')).toThrow(
      /at most one ENV LD_PRELOAD line, found 2/,
    );
    expect(() => imagePreload('ENV LD_PRELOAD=/a.so /b.so\n')).toThrow(
      /expected ENV LD_PRELOAD=<value> \(one variable on the line\)/,
    );
    // A library the machine lacks is said, with what to install, not silently left out.
    expect(() => localLibrary('libnot-there.so.9', ['/nonexistent'])).toThrow(
      /the image preloads libnot-there.so.9, which this machine does not have \(looked in \/nonexistent\)$/,
    );
    expect(() => localLibrary('libjemalloc.so.2', ['/nonexistent'])).toThrow(
      /\(looked in \/nonexistent\); on Debian: apt-get install libjemalloc2$/,
    );
    expect(localLibrary('passwd', ['/nonexistent', '/etc'])).toBe('/etc/passwd');
  });

  it("sets jemalloc's settings (MALLOC_CONF), which the server benchmark reads from it", () => {
    expect(imageEnv('MALLOC_CONF')).toMatch(/^[a-z_]+:[^,:]+(,[a-z_]+:[^,:]+)*$/);
    expect(imageEnv('MALLOC_CONF', 'FROM x\nENV MALLOC_CONF="a:1,b:2"\n')).toBe('a:1,b:2');
    expect(imageEnv('MALLOC_CONF', 'FROM x\nENV MALLOC_CONF=a:1\n')).toBe('a:1');
    expect(imageEnv('MALLOC_CONF', 'FROM x\n')).toBeNull();
    expect(() => imageEnv('MALLOC_CONF', 'ENV MALLOC_CONF=a:1\nENV MALLOC_CONF=b:2\n')).toThrow(
      /at most one ENV MALLOC_CONF line, found 2/,
    );
    expect(() => imageEnv('MALLOC_CONF', 'ENV MALLOC_CONF=a:1 OTHER=2\n')).toThrow(
      /expected ENV MALLOC_CONF=<value> \(one variable on the line\)/,
    );
  });

  // jemalloc says "<jemalloc>: Invalid conf pair" on stderr for a setting it does not know, and goes on without it.
  let jemalloc: string | undefined;
  try {
    jemalloc = localLibrary('libjemalloc.so.2');
  } catch {
    jemalloc = undefined;
  }
  it.skipIf(!jemalloc)(
    `jemalloc takes every one of the image's settings${jemalloc ? '' : ' (SKIPPED: no libjemalloc.so.2 here; apt-get install libjemalloc2 to run it)'}`,
    () => {
      const run = (conf: string) =>
        spawnSync(process.execPath, ['-e', '0'], {
          env: { ...process.env, LD_PRELOAD: jemalloc, MALLOC_CONF: conf },
          encoding: 'utf8',
        });
      // The check bites: a setting jemalloc does not know is reported.
      expect(run('no_such_setting:1').stderr).toContain('<jemalloc>: Invalid conf pair: no_such_setting:1');
      const r = run(imageEnv('MALLOC_CONF') as string);
      expect(r.status).toBe(0);
      expect(r.stderr).not.toContain('<jemalloc>');
    },
  );
});

describe.each(OVERLAYS)('deploy/%s', (dir) => {
  it('renders, and every object validates against the Kubernetes schemas', async () => {
    const objects = render(dir);
    expect(objects.length).toBeGreaterThan(5);
    for (const o of objects) {
      const M = await model(o);
      expect(() => new M(o).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
    }
    const d = objects.find((o) => o.kind === 'Deployment') as K8sObject & {
      spec: {
        template: {
          spec: { containers: { env: { name: string; value?: string }[]; securityContext: Record<string, unknown> }[] };
        };
      };
    };
    const c = d.spec.template.spec.containers[0];
    expect(c?.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    const readOnly = c?.env.find((e) => e.name === 'POOLSCOPE_READ_ONLY')?.value;
    expect(readOnly).toBe(dir === 'base' || dir === 'overlays/readonly' ? 'true' : 'false');
    // Its environment is a configuration poolscope starts with (values from Secrets and the downward API stand in).
    const stand: Record<string, string> = {
      DATABASE_URL: 'postgres://poolscope@db:5432/poolscope',
      POD_NAME: 'poolscope-0',
      POOLSCOPE_TRUSTED_PROXY_SECRET: 'x'.repeat(32),
    };
    const envOf = Object.fromEntries(
      (c?.env ?? []).map((e: { name: string; value?: string }) => [
        e.name,
        e.value ?? stand[e.name] ?? 'set-from-a-reference',
      ]),
    );
    expect(() => parseEnv(envOf), dir).not.toThrow();
    // Write rights exist exactly where resync is on.
    const patches = objects
      .filter((o) => o.kind === 'ClusterRole' && o.metadata.name !== 'poolscope-resync-operator')
      .some((o) => (o.rules as { verbs: string[] }[]).some((r) => r.verbs.includes('patch')));
    expect(patches).toBe(readOnly === 'false');
  });
});

describe('least privilege', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('the collector, a resync and leader election work with exactly the rendered rules, and use every one', async () => {
    // The HA overlay holds every rule (read, resync, leases).
    const rbac = render('overlays/ha').filter((o) =>
      ['ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding'].includes(o.kind),
    );
    const policy = policyFromRbac(rbac as never).filter((r) => r.users?.includes(SA));
    expect(policy.length).toBeGreaterThan(8);
    // poolscope runs with the ServiceAccount's kubeconfig; kubectl below with the admin's.
    const h = await harness(cleanups, 's01-scale-up-pre-fix.yaml', 1, {
      sim: { users: [{ name: SA }], policy },
      user: SA,
    });
    const { sim, store, azure, kubeconfig: kc } = h;
    // Install it the README's way: `kubectl apply -k` (as the cluster's admin), and the alert rules.
    const kubectl = async (...args: string[]) =>
      (
        await run('kubectl', ['--kubeconfig', sim.kubeconfigPath, '--context', 'mgmt-weu', ...args], {
          encoding: 'utf8',
        })
      ).stdout;
    expect(await kubectl('apply', '-k', path.join(DEPLOY, 'overlays', 'ha'))).toMatch(
      /clusterrole\.rbac\.authorization\.k8s\.io\/poolscope-read created[\s\S]*deployment\.apps\/poolscope created/,
    );
    expect(await kubectl('apply', '-f', path.join(DEPLOY, 'prometheus', 'rules.yaml'), '-n', 'poolscope')).toMatch(
      /prometheusrule\.monitoring\.coreos\.com\/poolscope created/,
    );
    // The Secrets the README has you create (HA database URL, auth proxy).
    expect(
      await kubectl(
        '-n',
        'poolscope',
        'create',
        'secret',
        'generic',
        'poolscope-db',
        '--from-literal=url=postgres://poolscope:secret@db:5432/poolscope',
      ),
    ).toMatch(/secret\/poolscope-db created/);
    const db = JSON.parse(await kubectl('-n', 'poolscope', 'get', 'secret', 'poolscope-db', '-o', 'json')) as {
      data: { url: string };
    };
    expect(Buffer.from(db.data.url, 'base64').toString()).toBe('postgres://poolscope:secret@db:5432/poolscope');
    expect(
      await kubectl(
        '-n',
        'poolscope',
        'create',
        'secret',
        'generic',
        'poolscope-proxy',
        `--from-literal=secret=${'a'.repeat(64)}`,
      ),
    ).toMatch(/created/);
    expect(
      await kubectl(
        '-n',
        'poolscope',
        'create',
        'secret',
        'generic',
        'poolscope-oidc',
        '--from-literal=client-secret=x',
        `--from-literal=cookie-secret=${'b'.repeat(32)}`,
      ),
    ).toMatch(/created/);
    // Applying again changes nothing new.
    expect(await kubectl('apply', '-k', path.join(DEPLOY, 'overlays', 'ha'))).not.toMatch(/created/);
    const applied = JSON.parse(await kubectl('get', 'clusterrole', 'poolscope-read', '-o', 'json')) as {
      rules: unknown;
    };
    expect(applied.rules).toEqual(
      rbac.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'poolscope-read')?.rules,
    );
    const collector = await h.start();

    // Everything the pool needs is read: all sources live, the Nodes through the kubeconfig Secret, the CAPZ version.
    const pool = await until('the pool read from every source', async () => {
      const d = await store.currentPool('mgmt-weu/default/pool0');
      return d &&
        d.sources.kube.state === 'ok' &&
        d.sources.workload.state === 'ok' &&
        d.sources.azure.state === 'ok' &&
        d.summary.capzVersion
        ? d
        : undefined;
    }).catch(async (e: Error) => {
      // Say which source a missing rule starved.
      const d = await store.currentPool('mgmt-weu/default/pool0');
      throw new Error(
        `${e.message}: sources ${JSON.stringify(d?.sources ?? null)}, capzVersion ${d?.summary.capzVersion ?? null}, health ${JSON.stringify(collector.health().kube)}`,
      );
    });
    expect(pool.findings.map((f) => f.code)).toContain('readiness-gate-frozen');
    expect(collector.health().kube.filter((h) => h.state !== 'live')).toEqual([]);

    // A resync, as poolscope's ServiceAccount (the operator's rights are checked with a SubjectAccessReview).
    const svc = buildResyncService({
      env: parseEnv({ POOLSCOPE_RESYNC_WAIT_SECONDS: '1' }),
      store,
      publish: () => {},
      kubeconfig: kc,
      contexts: ['mgmt-weu'],
      readAzure: (r) => azure.read(r),
      log: () => {},
    });
    const post = (body: unknown) =>
      new Request('http://localhost/api/pools/mgmt-weu/default/pool0/resync', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: {
          'content-type': 'application/json',
          'x-poolscope-request': '1',
          authorization: `Bearer ${sim.kube.tokens.get('operator')}`,
        },
      });
    const ref = { context: 'mgmt-weu', namespace: 'default', name: 'pool0' };
    expect((await svc.run(ref, post({ mode: 'sync-provider-ids', dryRun: true }))).outcome).toBe('dry-run');
    const sync = await svc.run(ref, post({ mode: 'sync-provider-ids' }));
    expect(sync.outcome).toBe('done');
    expect(sync.audit).toMatchObject({ problems: [], marker: true });
    expect((await svc.run(ref, post({ mode: 'reconcile' }))).outcome).toBe('done');

    // Leader election on its Lease, in poolscope's namespace (which the manifests created).
    const elector = new LeaderElector({
      kubeconfig: kc,
      namespace: 'poolscope',
      name: 'poolscope-collector',
      identity: 'replica-a',
      onStartedLeading: () => {},
      onStoppedLeading: () => {},
    });
    expect(await elector.tryAcquireOrRenew()).toBe(true);
    expect(await elector.tryAcquireOrRenew()).toBe(true);

    // Nothing was refused (a missing rule would have been a 403 above), and every rule was used.
    const saWrites = sim.kube.cluster('mgmt-weu').writes.filter((w) => w.user === SA).length;
    expect(saWrites).toBeGreaterThan(0);
    const hits = sim.kube.cluster('mgmt-weu').policyHits;
    const describeRule = (r: PolicyRule) =>
      `${r.verbs.join(',')} ${(r.apiGroups ?? []).join(',') || 'core'}/${r.resources.join(',')}${r.resourceNames ? ` (${r.resourceNames.join(',')})` : ''} in ${r.namespaces?.join(',')}`;
    const unused = policy.filter((r) => !hits.get(r)).map(describeRule);
    if (unused.length) console.warn(`Unused RBAC rules for ${SA}:\n  ${unused.join('\n  ')}`);
    expect(unused).toEqual([]);
  }, 90_000);
});
