// Seeds the API benchmark's store (run with --conditions=react-server): the `fleet` shape, 50 management
// clusters × 20 pools × 100 instances, plus one pool of 1,000 instances with 30 days of history (a change every
// 30 minutes, alternating between a frozen list and a healthy pool).
import { analyzePool } from '../lib/analyze';
import type { PoolDetail } from '../lib/api-types';
import { DEFAULT_AZURE } from '../lib/fixtures/objects';
import { buildPool, instanceProviderId, type InstanceSpec } from '../lib/fixtures/pool';
import { diffDetails } from '../lib/transitions';
import { openSqlite } from '../server/store/sqlite';
import { TimelineStore } from '../server/store/store';

const [dbFile] = process.argv.slice(2);
if (!dbFile) throw new Error('usage: api-seed.ts <db file>');
const store = new TimelineStore(openSqlite(dbFile));
await store.migrate();
const now = Date.now();
const iso = (t: number) => new Date(t).toISOString();

const healthy = (n: number): InstanceSpec[] => Array.from({ length: n }, (_, i) => ({ member: String(i) }));
for (let c = 0; c < 50; c++) {
  const at = iso(now - 3_600_000 + c);
  const writes = [];
  for (let p = 0; p < 20; p++) {
    const b = buildPool({
      context: `mgmt-${String(c).padStart(2, '0')}`,
      cluster: `wl-${c}`,
      name: `pool${p}`,
      replicas: 100,
      instances: healthy(100),
      capzVersion: 'v1.26.0',
    });
    const d = analyzePool(b.input, { now: at });
    writes.push({ detail: d, transitions: diffDetails(null, d, at) });
  }
  await store.writeCycle({ id: `fleet-${c}`, at }, writes);
}

const N = 1000;
let prev: PoolDetail | null = null;
const start = now - 30 * 86_400_000;
const step = 30 * 60_000;
for (let t = start, i = 0; t <= now - step; t += step, i++) {
  const frozen = i % 2 === 1;
  const replicas = frozen ? N : N - 10;
  const instances = healthy(replicas).map((x, j) =>
    frozen && j >= N - 10 ? { ...x, node: 'not-ready' as const, createdMinutesAgo: 3 } : x,
  );
  const list = instances.slice(0, N - 10).map((x) => instanceProviderId(DEFAULT_AZURE, 'big', x.member));
  const b = buildPool({
    context: 'mgmt-00',
    cluster: 'wl-0',
    name: 'big',
    replicas,
    instances,
    capzVersion: 'v1.19.1',
    ...(frozen
      ? { amp: { ready: false, provisioningState: 'Updating' }, mp: { providerIDList: list, phase: 'Provisioned' } }
      : {}),
  });
  const d: PoolDetail = analyzePool(b.input, { now: iso(t), previous: prev });
  await store.writeCycle({ id: `big-${i}`, at: iso(t) }, [{ detail: d, transitions: diffDetails(prev, d, iso(t)) }]);
  prev = d;
}
console.log(JSON.stringify(await store.stats()));
await store.close();
