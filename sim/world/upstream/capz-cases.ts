// The facts the simulated CAPZ is held to, as data: rows of upstream's own unit tables (input → what the test
// expects) and, where no test covers a point or the test does not exist at a release, rows read from the code
// (file and lines cited). Written in our words from kubernetes-sigs/cluster-api-provider-azure at three
// points: main 69ec3a4, tag v1.26.0 and tag v1.19.4 (the simulator's `main`, `1.26` and `pre-1.20`).
// ~760 lines because it is a table: one row per upstream case, at three CAPZ versions. Split by version, one
// behaviour's rows would no longer sit side by side.

import type { CapzBehaviour, CapzCondition, CapzPoolRef, CapzScaleSetInput } from '../capz-behaviour';

const CAPZ_REPO = 'kubernetes-sigs/cluster-api-provider-azure';
const CAPI_REPO = 'kubernetes-sigs/cluster-api';
/** CAPZ main as read (2026-08), the merge of #6565. */
const CAPZ_MAIN = '69ec3a40a818ccbc32b8ce88c84609404d8cb7a2';

/** The upstream point each simulated behaviour stands for. */
const CAPZ_REF: Record<CapzBehaviour, string> = { main: CAPZ_MAIN, '1.26': 'v1.26.0', 'pre-1.20': 'v1.19.4' };

const TESTS = 'azure/scope/machinepool_test.go';
const CODE = 'azure/scope/machinepool.go';

export interface UpstreamSource {
  repo: typeof CAPZ_REPO | typeof CAPI_REPO;
  /** A release tag, or a full commit. */
  ref: string;
  path: string;
  /** A row of a test table: the Go test and the case's name. */
  test?: string;
  case?: string;
  /** A fact read from the code: the function, its lines and what they do. */
  func?: string;
  lines?: string;
  fact?: string;
}

/** A condition the row expects: each field given must match; `absent` for a type that must not be set. */
export type ExpectedCondition =
  { type: string; status?: string; reason?: string; severity?: string } | { type: string; absent: true };

export interface ProvisioningCase {
  source: UpstreamSource;
  behaviour: CapzBehaviour;
  input: CapzScaleSetInput;
  expect: { ready?: boolean; provisioningState?: string; conditions?: ExpectedCondition[] };
  /** What the row rests on beyond the source's own words. */
  note?: string;
  /** Why the row does not apply to the simulator, with the upstream evidence (the row is then listed, skipped). */
  notApplicable?: string;
}

/** How a test row or code fact is named in the test report. */
export function sourceName(s: UpstreamSource): string {
  const ref = /^[0-9a-f]{40}$/.test(s.ref) ? s.ref.slice(0, 7) : s.ref;
  const where = s.lines ? `${s.path}:L${s.lines}` : s.path;
  return `${s.repo}@${ref} ${where} ${s.test ?? s.func ?? ''} › ${s.case ?? s.fact ?? ''}`;
}

// ---------------- setProvisioningStateAndConditions ----------------

const SET_STATE_TEST = 'TestMachinePoolScope_setProvisioningStateAndConditions';
const SET_STATE = 'setProvisioningStateAndConditions';

/** The test's starting point: a fresh AzureMachinePool (no conditions, not ready, 0 replicas), spec.replicas unset. */
const fresh = (vmssState: string, o: Partial<CapzScaleSetInput> = {}): CapzScaleSetInput => ({
  vmssState,
  specReplicas: null,
  statusReplicas: 0,
  ready: false,
  conditions: [],
  ...o,
});

const cond = (type: string, status: 'True' | 'False', reason?: string): CapzCondition =>
  status === 'True' ? { type, status } : { type, status, ...(reason ? { reason } : {}), severity: 'Info' };

const allTrue: ExpectedCondition[] = ['ScaleSetRunning', 'ScaleSetModelUpdated', 'ScaleSetDesiredReplicas'].map(
  (type) => ({ type, status: 'True' }),
);

/** The rows both main and v1.26.0 carry with the same name, input and expectation. */
function sharedStateRows(behaviour: 'main' | '1.26'): ProvisioningCase[] {
  const src = (c: string): UpstreamSource => ({
    repo: CAPZ_REPO,
    ref: CAPZ_REF[behaviour],
    path: TESTS,
    test: SET_STATE_TEST,
    case: c,
  });
  return [
    {
      source: src(
        'if provisioning state is set to Succeeded and replicas match, MachinePool is ready and conditions match',
      ),
      behaviour,
      input: fresh('Succeeded', { specReplicas: 1, statusReplicas: 1 }),
      expect: { ready: true, conditions: allTrue },
    },
    {
      source: src(
        'if provisioning state is set to Succeeded and replicas are higher on AzureMachinePool, MachinePool is ready and ScalingDown',
      ),
      behaviour,
      input: fresh('Succeeded', { specReplicas: 1, statusReplicas: 2 }),
      expect: {
        ready: true,
        conditions: [{ type: 'ScaleSetDesiredReplicas', status: 'False', reason: 'ScaleSetScalingDown' }],
      },
    },
    {
      source: src(
        'if provisioning state is set to Succeeded and replicas are lower on AzureMachinePool, MachinePool is ready and ScalingUp',
      ),
      behaviour,
      input: fresh('Succeeded', { specReplicas: 2, statusReplicas: 1 }),
      expect: {
        ready: true,
        conditions: [{ type: 'ScaleSetDesiredReplicas', status: 'False', reason: 'ScaleSetScalingUp' }],
      },
    },
    {
      source: src(
        'if provisioning state is set to Updating, MachinePool is ready and scale set model is set to OutOfDate',
      ),
      behaviour,
      input: fresh('Updating'),
      expect: {
        ready: true,
        conditions: [{ type: 'ScaleSetModelUpdated', status: 'False', reason: 'ScaleSetModelOutOfDate' }],
      },
    },
    {
      source: src(
        'if provisioning state is set to Creating, MachinePool is NotReady and scale set running condition is set to Creating',
      ),
      behaviour,
      input: fresh('Creating'),
      expect: { ready: false, conditions: [{ type: 'ScaleSetRunning', status: 'False', reason: 'ScaleSetCreating' }] },
    },
    {
      source: src(
        'if provisioning state is set to Deleting, MachinePool is NotReady and scale set running condition is set to Deleting',
      ),
      behaviour,
      input: fresh('Deleting'),
      expect: { ready: false, conditions: [{ type: 'ScaleSetRunning', status: 'False', reason: 'ScaleSetDeleting' }] },
    },
  ];
}

const mainTest = (c: string): UpstreamSource => ({
  repo: CAPZ_REPO,
  ref: CAPZ_MAIN,
  path: TESTS,
  test: SET_STATE_TEST,
  case: c,
});
const v126Test = (c: string): UpstreamSource => ({
  repo: CAPZ_REPO,
  ref: 'v1.26.0',
  path: TESTS,
  test: SET_STATE_TEST,
  case: c,
});

/** main's table (machinepool_test.go L1953–2164 at 69ec3a4): ten rows. */
const MAIN_STATE_TESTS: ProvisioningCase[] = [
  ...sharedStateRows('main'),
  {
    source: mainTest(
      'if provisioning state is set to Failed, MachinePool is NotReady and scale set running condition is set to Failed',
    ),
    behaviour: 'main',
    input: fresh('Failed', { ready: true }),
    expect: {
      ready: false,
      conditions: [{ type: 'ScaleSetRunning', status: 'False', reason: 'ScaleSetProvisionFailed' }],
    },
  },
  {
    source: mainTest(
      'if provisioning state is set to Canceled, MachinePool is NotReady and scale set running condition is set to the ProvisioningState',
    ),
    behaviour: 'main',
    input: fresh('Canceled', { ready: true }),
    expect: { ready: false, conditions: [{ type: 'ScaleSetRunning', status: 'False', reason: 'Canceled' }] },
  },
  {
    source: mainTest(
      'if provisioning state is set to Deleted, MachinePool is NotReady and scale set running condition is set to the ProvisioningState',
    ),
    behaviour: 'main',
    input: fresh('Deleted', { ready: true }),
    expect: { ready: false, conditions: [{ type: 'ScaleSetRunning', status: 'False', reason: 'Deleted' }] },
  },
  {
    source: mainTest(
      'if provisioning state is set to Migrating, MachinePool Ready status is left unchanged and scale set running condition is set to the ProvisioningState',
    ),
    behaviour: 'main',
    input: fresh('Migrating', { ready: true }),
    expect: { ready: true, conditions: [{ type: 'ScaleSetRunning', status: 'False', reason: 'Migrating' }] },
  },
];

const NOT_ADJUSTED =
  'The test asserts only the condition; its name says readiness is not adjusted, and the AzureMachinePool starts not ready, so it stays not ready.';

/** v1.26.0's table (machinepool_test.go L1811–1986): eight rows. */
const V126_STATE_TESTS: ProvisioningCase[] = [
  ...sharedStateRows('1.26'),
  {
    source: v126Test(
      'if provisioning state is set to Failed, MachinePool ready state is not adjusted, and scale set running condition is set to Failed',
    ),
    behaviour: '1.26',
    input: fresh('Failed'),
    expect: {
      ready: false,
      conditions: [{ type: 'ScaleSetRunning', status: 'False', reason: 'ScaleSetProvisionFailed' }],
    },
    note: NOT_ADJUSTED,
  },
  {
    source: v126Test(
      'if provisioning state is set to something not explicitly handled, MachinePool ready state is not adjusted, and scale set running condition is set to the ProvisioningState',
    ),
    behaviour: '1.26',
    input: fresh('Migrating'),
    expect: { ready: false, conditions: [{ type: 'ScaleSetRunning', status: 'False', reason: 'Migrating' }] },
    note: NOT_ADJUSTED,
  },
];

/** Where each branch of the function sits, per upstream point. */
const STATE_LINES: Record<
  CapzBehaviour,
  {
    match: string;
    mismatch: string;
    updating: string;
    creating: string;
    deleting: string;
    failed: string;
    canceled: string;
    other: string;
  }
> = {
  main: {
    match: '641-646',
    mismatch: '647-656',
    updating: '657-659',
    creating: '660-662',
    deleting: '663-665',
    failed: '666-668',
    canceled: '669-671',
    other: '672-675',
  },
  '1.26': {
    match: '603-608',
    mismatch: '609-618',
    updating: '619-621',
    creating: '622-624',
    deleting: '625-627',
    failed: '628-629',
    canceled: '630-631',
    other: '630-631',
  },
  'pre-1.20': {
    match: '603-608',
    mismatch: '609-618',
    updating: '619-621',
    creating: '622-624',
    deleting: '625-627',
    failed: '628-630',
    canceled: '628-630',
    other: '628-630',
  },
};

const code = (behaviour: CapzBehaviour, lines: string, fact: string): UpstreamSource => ({
  repo: CAPZ_REPO,
  ref: CAPZ_REF[behaviour],
  path: CODE,
  func: SET_STATE,
  lines,
  fact,
});

/**
 * v1.19.4 has no test for the function (the table came with #5537 in v1.20): every branch read from the code,
 * L600–632. Each starts ready where the branch makes it not ready, so the row shows the change.
 */
const V119_STATE_CODE: ProvisioningCase[] = (() => {
  const l = STATE_LINES['pre-1.20'];
  const row = (
    lines: string,
    fact: string,
    input: CapzScaleSetInput,
    expect: ProvisioningCase['expect'],
  ): ProvisioningCase => ({ source: code('pre-1.20', lines, fact), behaviour: 'pre-1.20', input, expect });
  const running = (reason: string): ExpectedCondition[] => [
    { type: 'ScaleSetRunning', status: 'False', reason, severity: 'Info' },
  ];
  return [
    row(
      l.match,
      'Succeeded with spec.replicas equal to status.replicas: all three ScaleSet conditions True, ready',
      fresh('Succeeded', { specReplicas: 3, statusReplicas: 3 }),
      { ready: true, provisioningState: 'Succeeded', conditions: allTrue },
    ),
    row(
      l.mismatch,
      'Succeeded with fewer ready than desired: state rewritten to Updating, ScalingUp (Info), not ready',
      fresh('Succeeded', { specReplicas: 5, statusReplicas: 3, ready: true }),
      {
        ready: false,
        provisioningState: 'Updating',
        conditions: [
          { type: 'ScaleSetDesiredReplicas', status: 'False', reason: 'ScaleSetScalingUp', severity: 'Info' },
        ],
      },
    ),
    row(
      l.mismatch,
      'Succeeded with more ready than desired: state rewritten to Updating, ScalingDown (Info), not ready',
      fresh('Succeeded', { specReplicas: 3, statusReplicas: 5, ready: true }),
      {
        ready: false,
        provisioningState: 'Updating',
        conditions: [
          { type: 'ScaleSetDesiredReplicas', status: 'False', reason: 'ScaleSetScalingDown', severity: 'Info' },
        ],
      },
    ),
    row(
      l.updating,
      'Updating: ScaleSetModelUpdated False ModelOutOfDate (Info), not ready',
      fresh('Updating', { ready: true }),
      {
        ready: false,
        provisioningState: 'Updating',
        conditions: [
          { type: 'ScaleSetModelUpdated', status: 'False', reason: 'ScaleSetModelOutOfDate', severity: 'Info' },
        ],
      },
    ),
    row(
      l.creating,
      'Creating: ScaleSetRunning False ScaleSetCreating (Info), not ready',
      fresh('Creating', { ready: true }),
      { ready: false, provisioningState: 'Creating', conditions: running('ScaleSetCreating') },
    ),
    row(
      l.deleting,
      'Deleting: ScaleSetRunning False ScaleSetDeleting (Info), not ready',
      fresh('Deleting', { ready: true }),
      { ready: false, provisioningState: 'Deleting', conditions: running('ScaleSetDeleting') },
    ),
    ...['Failed', 'Canceled', 'Deleted', 'Migrating'].map((s) =>
      row(
        l.other,
        `${s} falls to the default branch: ScaleSetRunning False with reason ${s} (Info), not ready`,
        fresh(s, { ready: true }),
        { ready: false, provisioningState: s, conditions: running(s) },
      ),
    ),
  ];
})();

/** Facts no test row covers, read from the code at each point: severities, and the conditions a branch does not touch. */
function stateCodeFacts(behaviour: CapzBehaviour): ProvisioningCase[] {
  const l = STATE_LINES[behaviour];
  const row = (
    lines: string,
    fact: string,
    input: CapzScaleSetInput,
    expect: ProvisioningCase['expect'],
  ): ProvisioningCase => ({ source: code(behaviour, lines, fact), behaviour, input, expect });
  const scalingUp = [
    cond('Ready', 'False', 'ScaleSetScalingUp'),
    cond('ScaleSetDesiredReplicas', 'False', 'ScaleSetScalingUp'),
    cond('ScaleSetModelUpdated', 'False', 'ScaleSetModelOutOfDate'),
    cond('ScaleSetRunning', 'True'),
  ];
  const rows: ProvisioningCase[] = [
    row(
      l.creating,
      'Creating marks only ScaleSetRunning: ScaleSetDesiredReplicas and ScaleSetModelUpdated keep their earlier False',
      fresh('Creating', { specReplicas: 5, statusReplicas: 3, conditions: scalingUp }),
      {
        provisioningState: 'Creating',
        conditions: [
          { type: 'ScaleSetRunning', status: 'False', reason: 'ScaleSetCreating', severity: 'Info' },
          { type: 'ScaleSetDesiredReplicas', status: 'False', reason: 'ScaleSetScalingUp' },
          { type: 'ScaleSetModelUpdated', status: 'False', reason: 'ScaleSetModelOutOfDate' },
        ],
      },
    ),
    row(
      l.mismatch,
      'Succeeded with a replica mismatch marks only ScaleSetDesiredReplicas: ScaleSetModelUpdated keeps its earlier False, the state reads Updating',
      fresh('Succeeded', { specReplicas: 5, statusReplicas: 4, conditions: scalingUp }),
      {
        provisioningState: 'Updating',
        conditions: [
          { type: 'ScaleSetDesiredReplicas', status: 'False', reason: 'ScaleSetScalingUp', severity: 'Info' },
          { type: 'ScaleSetModelUpdated', status: 'False', reason: 'ScaleSetModelOutOfDate' },
          { type: 'ScaleSetRunning', status: 'True' },
        ],
      },
    ),
    row(
      l.match,
      'only Succeeded with matching replicas marks all three ScaleSet conditions True',
      fresh('Succeeded', { specReplicas: 5, statusReplicas: 5, conditions: scalingUp }),
      { provisioningState: 'Succeeded', ready: true, conditions: allTrue },
    ),
    row(
      l.updating,
      'Updating marks only ScaleSetModelUpdated: a fresh AzureMachinePool gets no ScaleSetRunning or ScaleSetDesiredReplicas',
      fresh('Updating'),
      {
        conditions: [
          { type: 'ScaleSetModelUpdated', status: 'False', reason: 'ScaleSetModelOutOfDate', severity: 'Info' },
          { type: 'ScaleSetRunning', absent: true },
          { type: 'ScaleSetDesiredReplicas', absent: true },
        ],
      },
    ),
  ];
  if (behaviour === 'pre-1.20') return rows;
  const keeps = behaviour === '1.26';
  for (const s of ['Failed', 'Canceled', 'Deleted']) {
    const lines = s === 'Failed' ? l.failed : l.canceled;
    const reason = s === 'Failed' ? 'ScaleSetProvisionFailed' : s;
    rows.push(
      row(
        lines,
        `${s}: ScaleSetRunning False ${reason} with severity Info; readiness ${keeps ? 'left as it was' : 'set false'}`,
        fresh(s, { ready: true, specReplicas: 3, statusReplicas: 3 }),
        {
          ready: keeps,
          provisioningState: s,
          conditions: [{ type: 'ScaleSetRunning', status: 'False', reason, severity: 'Info' }],
        },
      ),
    );
  }
  rows.push(
    row(
      l.other,
      'a state no branch names (Migrating): ScaleSetRunning False with the raw state (Info), readiness left as it was',
      fresh('Migrating', { ready: true }),
      {
        ready: true,
        provisioningState: 'Migrating',
        conditions: [{ type: 'ScaleSetRunning', status: 'False', reason: 'Migrating', severity: 'Info' }],
      },
    ),
  );
  return rows;
}

export const PROVISIONING_CASES: readonly ProvisioningCase[] = [
  ...MAIN_STATE_TESTS,
  ...V126_STATE_TESTS,
  ...V119_STATE_CODE,
  ...stateCodeFacts('main'),
  ...stateCodeFacts('1.26'),
  ...stateCodeFacts('pre-1.20'),
];

// ---------------- updateReplicasAndProviderIDs ----------------

const REPLICAS_TEST = 'TestMachinePoolScope_updateReplicasAndProviderIDs';
const REPLICAS = 'updateReplicasAndProviderIDs';

/** An AzureMachinePoolMachine as far as the function reads it. */
export interface AmpmFact {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  providerID: string;
  ready: boolean;
}

export interface ReplicasCase {
  source: UpstreamSource;
  behaviour: CapzBehaviour;
  input: {
    pool: CapzPoolRef;
    ampms: AmpmFact[];
    /** The order the cache lists them in, as indexes into `ampms`; as given when absent. */
    cacheOrder?: number[];
  };
  /** `providerIDList` in this exact order; `providerIDs` in any order. */
  expect: { replicas?: number; providerIDList?: string[]; providerIDs?: string[] };
  note?: string;
  notApplicable?: string;
}

/** The tables' pool: cluster1, amp1, mp1 in default. */
const POOL: CapzPoolRef = { namespace: 'default', clusterName: 'cluster1', ampName: 'amp1', mpName: 'mp1' };

/** The tables' three ready machines ampm0..2 (getReadyAzureMachinePoolMachines), each with the four labels. */
function readyAmpms(pool: CapzPoolRef = POOL, n = 3): AmpmFact[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `ampm${i}`,
    namespace: 'default',
    labels: {
      'cluster.x-k8s.io/cluster-name': pool.clusterName,
      'azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool': pool.ampName,
      'cluster.x-k8s.io/pool-name': pool.mpName,
      [pool.clusterName]: 'owned',
    },
    providerID: `azure://foo/ampm${i}`,
    ready: true,
  }));
}

/** The tables' machines with a change to the first (or each) one. */
function changed(f: (a: AmpmFact, i: number) => Partial<AmpmFact>, base = readyAmpms()): AmpmFact[] {
  return base.map((a, i) => ({ ...a, ...f(a, i), labels: { ...a.labels, ...f(a, i).labels } }));
}
const firstLabel = (key: string, value: string) => changed((_, i) => (i === 0 ? { labels: { [key]: value } } : {}));
const IDS = ['azure://foo/ampm0', 'azure://foo/ampm1', 'azure://foo/ampm2'];

/** #6011 (commit 7b224c98d, first in v1.23.0) added the sort and its test row. */
const SORTED_SINCE_1_23: Record<CapzBehaviour, boolean> = { main: true, '1.26': true, 'pre-1.20': false };

function replicaTests(behaviour: CapzBehaviour): ReplicasCase[] {
  const src = (c: string): UpstreamSource => ({
    repo: CAPZ_REPO,
    ref: CAPZ_REF[behaviour],
    path: TESTS,
    test: REPLICAS_TEST,
    case: c,
  });
  const sorted = SORTED_SINCE_1_23[behaviour];
  const rows: ReplicasCase[] = [
    {
      source: src('if there are three ready machines with matching labels, then should count them'),
      behaviour,
      input: { pool: POOL, ampms: readyAmpms() },
      // HaveExactElements at main and v1.26.0; ConsistOf (any order) at v1.19.4.
      expect: sorted ? { replicas: 3, providerIDList: IDS } : { replicas: 3, providerIDs: IDS },
    },
    {
      source: src('should only count machines with matching machine pool label'),
      behaviour,
      input: {
        pool: POOL,
        ampms: firstLabel('azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool', 'not_correct'),
      },
      expect: { replicas: 2 },
    },
    {
      source: src('should only count machines with matching cluster name label'),
      behaviour,
      input: { pool: POOL, ampms: firstLabel('cluster.x-k8s.io/cluster-name', 'not_correct') },
      expect: { replicas: 2 },
    },
  ];
  if (sorted) {
    rows.push({
      source: src('providerIDList should be sorted for deterministic ordering'),
      behaviour,
      input: { pool: POOL, ampms: changed((_, i) => ({ providerID: `azure://foo/ampm${[2, 0, 1][i]}` })) },
      expect: { replicas: 3, providerIDList: IDS },
    });
  }
  return rows;
}

const REPLICA_LINES: Record<CapzBehaviour, { count: string; labels: string; list: string; sort?: string }> = {
  main: { count: '370-394', labels: '396-403', list: '406-417', sort: '388-389' },
  '1.26': { count: '348-372', labels: '374-381', list: '384-395', sort: '366-367' },
  'pre-1.20': { count: '351-372', labels: '374-381', list: '384-395' },
};

function replicaCodeFacts(behaviour: CapzBehaviour): ReplicasCase[] {
  const l = REPLICA_LINES[behaviour];
  const src = (lines: string, fact: string): UpstreamSource => ({
    repo: CAPZ_REPO,
    ref: CAPZ_REF[behaviour],
    path: CODE,
    func: REPLICAS,
    lines,
    fact,
  });
  const selection = `${l.labels}, ${l.list}`;
  const rows: ReplicasCase[] = [
    {
      source: src(selection, 'a machine whose pool-name label names another MachinePool is not listed'),
      behaviour,
      input: { pool: POOL, ampms: firstLabel('cluster.x-k8s.io/pool-name', 'mp2') },
      expect: { replicas: 2, providerIDs: IDS.slice(1) },
    },
    {
      source: src(selection, 'a machine without the `<cluster>: owned` label is not listed'),
      behaviour,
      input: { pool: POOL, ampms: firstLabel('cluster1', 'shared') },
      expect: { replicas: 2, providerIDs: IDS.slice(1) },
    },
    {
      source: src(l.list, 'a machine in another namespace is not listed'),
      behaviour,
      input: { pool: POOL, ampms: changed((_, i) => (i === 0 ? { namespace: 'other' } : {})) },
      expect: { replicas: 2, providerIDs: IDS.slice(1) },
    },
    {
      source: src(l.count, 'a machine not ready is listed but not counted'),
      behaviour,
      input: { pool: POOL, ampms: changed((_, i) => (i === 0 ? { ready: false } : {})) },
      expect: { replicas: 2, providerIDs: IDS },
    },
  ];
  if (l.sort) {
    rows.push({
      source: src(l.sort, 'the list is sorted whatever order the cache hands the machines in'),
      behaviour,
      input: { pool: POOL, ampms: readyAmpms(), cacheOrder: [2, 1, 0] },
      expect: { providerIDList: IDS },
    });
  } else {
    for (const order of [
      [2, 0, 1],
      [1, 2, 0],
    ]) {
      rows.push({
        source: src(l.count, `no sort: the list is in the order the cache hands the machines in (${order.join(', ')})`),
        behaviour,
        input: { pool: POOL, ampms: readyAmpms(), cacheOrder: order },
        expect: { replicas: 3, providerIDList: order.map((i) => IDS[i] as string) },
      });
    }
  }
  if (behaviour === 'main') {
    // CAPI's own test vector for the hash (see LABEL_VALUE_CASES).
    const pool = { ...POOL, mpName: 'machineSetName'.repeat(12) };
    const ampms = changed(
      (_, i) => ({ labels: { 'cluster.x-k8s.io/pool-name': i === 0 ? pool.mpName : 'hash_FR_ghQ_z' } }),
      readyAmpms(pool),
    );
    rows.push({
      source: src(
        `400, ${l.list}`,
        'the pool-name label holds the MachinePool name as CAPI formats a label value: hashed past 63 characters',
      ),
      behaviour,
      input: { pool, ampms },
      expect: { replicas: 2, providerIDs: IDS.slice(1) },
      note: "The label is format.MustFormatValue(MachinePool name) (machinepool.go L400); the hash value is CAPI's own test vector (util/labels/format/helpers_test.go, TestNameLabelValue).",
    });
  }
  return rows;
}

export const REPLICAS_CASES: readonly ReplicasCase[] = [
  ...replicaTests('main'),
  ...replicaTests('1.26'),
  ...replicaTests('pre-1.20'),
  ...replicaCodeFacts('main'),
  ...replicaCodeFacts('1.26'),
  ...replicaCodeFacts('pre-1.20'),
];

export interface LabelValueCase {
  source: UpstreamSource;
  name: string;
  expect: string;
}

const formatTest = (c: string): UpstreamSource => ({
  repo: CAPI_REPO,
  ref: 'v1.14.0',
  path: 'util/labels/format/helpers_test.go',
  test: 'TestNameLabelValue',
  case: c,
});

/** CAPI's table for the label value CAPZ selects machines by (CAPZ main builds with CAPI v1.14.0; v1.9.6 has the same rows). */
export const LABEL_VALUE_CASES: readonly LabelValueCase[] = [
  {
    source: formatTest("return the name if it's less than 63 characters"),
    name: 'machineSetName',
    expect: 'machineSetName',
  },
  {
    source: formatTest('return  for a name with more than 63 characters'),
    name: 'machineSetName'.repeat(12),
    expect: 'hash_FR_ghQ_z',
  },
];

// ---------------- the Ready summary (CAPI's condition helpers, as CAPZ's patch uses them) ----------------

export interface SummaryCase {
  source: UpstreamSource;
  conditions: CapzCondition[];
  expect: CapzCondition | null;
  notApplicable?: string;
}

const CONDITIONS = 'util/deprecated/v1beta1/conditions';
const capi = (file: string, func: string, lines: string, fact: string): UpstreamSource => ({
  repo: CAPI_REPO,
  ref: 'v1.14.0',
  path: `${CONDITIONS}/${file}`,
  func,
  lines,
  fact,
});

/**
 * CAPZ's PatchObject writes Ready with CAPI's SetSummary (machinepool.go L725 at main, L682 at v1.26.0, L681 at
 * v1.19.4). CAPZ main builds with CAPI v1.14.0 (go.mod), cited here; v1.13.3 (CAPZ v1.26.0) and v1.9.6 (v1.19.4,
 * util/conditions/merge.go) carry the same rules.
 */
export const SUMMARY_CASES: readonly SummaryCase[] = [
  {
    source: capi('merge.go', 'merge', '66-82', 'all others True: Ready True'),
    conditions: [
      cond('ScaleSetDesiredReplicas', 'True'),
      cond('ScaleSetModelUpdated', 'True'),
      cond('ScaleSetRunning', 'True'),
    ],
    expect: { type: 'Ready', status: 'True' },
  },
  {
    source: capi(
      'merge.go',
      'getConditionGroups',
      '86-144',
      'several False Info: the reason of the first by type (ScaleSetModelUpdated before ScaleSetRunning)',
    ),
    conditions: [
      cond('ScaleSetRunning', 'False', 'ScaleSetCreating'),
      cond('ScaleSetModelUpdated', 'False', 'ScaleSetModelOutOfDate'),
      cond('ScaleSetDesiredReplicas', 'True'),
    ],
    expect: { type: 'Ready', status: 'False', reason: 'ScaleSetModelOutOfDate', severity: 'Info' },
  },
  {
    source: capi(
      'merge.go',
      'conditionGroup.mergePriority',
      '212-231',
      'a False Error outranks a False Info whatever their types',
    ),
    conditions: [
      { type: 'BootstrapSucceeded', status: 'False', reason: 'BootstrapInProgress', severity: 'Info' },
      { type: 'ScaleSetRunning', status: 'False', reason: 'Failed', severity: 'Error' },
    ],
    expect: { type: 'Ready', status: 'False', reason: 'Failed', severity: 'Error' },
  },
  {
    source: capi('getter.go', 'summary', '121-166', 'the old Ready is not in scope: only the other conditions decide'),
    conditions: [cond('Ready', 'False', 'ScaleSetScalingUp'), cond('ScaleSetDesiredReplicas', 'True')],
    expect: { type: 'Ready', status: 'True' },
  },
];
