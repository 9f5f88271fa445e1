// The facts the simulated CAPI MachinePool controller is held to, as data: rows of upstream's own unit tests
// (input → what the test expects) and, where no test asserts a point, rows read from the code (file and lines
// cited). Written in our words from kubernetes-sigs/cluster-api at main ae7ff04 (core/reconcilers/machinepool/).
// ~810 lines because it is a table: one row per upstream test case or cited line, each with its source. Split,
// the rows of one upstream test would sit in several files.

import type { CapiNode, InfraMachinePool, MachinePoolState, NodeRef, Taint } from '../capi-behaviour';
import type { MachineView, ReplicaCounters, StatusVersion } from '../capi-status';

const CAPI_REPO = 'kubernetes-sigs/cluster-api';
/** CAPI main as read (2026-08-21); the MachinePool controller lives in core/reconcilers/machinepool/ since v1.14. */
const CAPI_MAIN = 'ae7ff047db499ac3858ade268ba38db8c9f128bb';

const DIR = 'core/reconcilers/machinepool';
const PHASES_TEST = `${DIR}/machinepool_controller_phases_test.go`;
const NODEREF_TEST = `${DIR}/machinepool_controller_noderef_test.go`;
const STATUS_TEST = `${DIR}/machinepool_controller_status_test.go`;
const NODEREF = `${DIR}/machinepool_controller_noderef.go`;
const PHASES = `${DIR}/machinepool_controller_phases.go`;
const STATUS = `${DIR}/machinepool_controller_status.go`;

export interface UpstreamSource {
  repo: typeof CAPI_REPO;
  /** A full commit. */
  ref: string;
  path: string;
  /** A test's case: the Go test and the case's name (Go suffixes a repeated name with #01). */
  test?: string;
  case?: string;
  /** A fact read from the code: the function, its lines and what they do. */
  func?: string;
  lines?: string;
  fact?: string;
}

/** How a test row or code fact is named in the test report. */
export function sourceName(s: UpstreamSource): string {
  const where = s.lines ? `${s.path}:L${s.lines}` : s.path;
  return `${s.repo}@${s.ref.slice(0, 7)} ${where} ${s.test ?? s.func ?? ''} › ${s.case ?? s.fact ?? ''}`;
}

const testCase = (path: string, test: string, c: string): UpstreamSource => ({
  repo: CAPI_REPO,
  ref: CAPI_MAIN,
  path,
  test,
  case: c,
});
const codeFact = (path: string, func: string, lines: string, fact: string): UpstreamSource => ({
  repo: CAPI_REPO,
  ref: CAPI_MAIN,
  path,
  func,
  lines,
  fact,
});

interface Common {
  source: UpstreamSource;
  /** Why the row does not apply to the simulator, with the upstream evidence (the row is then listed, skipped). */
  notApplicable?: string;
  /** What the upstream case also asserts that the simulator does not model, and why (left out of `expect`). */
  notModelled?: string;
}

// ---------------- reconcile, then reconcilePhase ----------------

export interface ReconcileExpect {
  /** Whether the reconcile returned an error. */
  error?: boolean;
  /** Whether it asked to be called again after a delay. */
  requeue?: boolean;
  phase?: string;
  infrastructureProvisioned?: boolean;
  bootstrapDataSecretCreated?: boolean;
  /** spec.providerIDList and status.replicas; null = unset. */
  providerIDList?: string[] | null;
  statusReplicas?: number | null;
  v1beta1?: MachinePoolState['v1beta1'];
  nodeRefs?: string[];
  /** ReplicasReady's status; null = not set. */
  replicasReady?: 'True' | 'False' | null;
  /** Nodes the test finds still there, and gone. */
  nodesKept?: string[];
  nodesDeleted?: string[];
}

export interface ReconcileCase extends Common {
  /**
   * What the upstream test runs before reconcilePhase: the normal phases (doReconcile), reconcileInfrastructure
   * alone, or (code facts) reconcileNodeRefs alone.
   */
  calls: 'doReconcile' | 'reconcileInfrastructure' | 'reconcileNodeRefs';
  given: {
    mp: MachinePoolState;
    /** The bootstrap config's status.initialization.dataSecretCreated. */
    bootstrapDataSecretCreated: boolean;
    infra: InfraMachinePool;
    /** The workload cluster's Nodes (null: unreachable). */
    nodes: CapiNode[] | null;
    /** ms since the epoch, for Node availability. */
    now?: number;
  };
  /** What the test sets on the MachinePool after the reconcile and before reconcilePhase. */
  thenSet?: { v1beta1ReadyReplicas?: number; specReplicas?: number };
  expect: ReconcileExpect;
  /** A second reconcile of the same MachinePool, with the bootstrap config swapped for one in this state. */
  again?: { bootstrapDataSecretCreated: boolean; expect: ReconcileExpect };
}

/** Upstream's test MachinePool (name, namespace, one replica, nothing in status) with the fields given. */
function machinePool(o: Partial<MachinePoolState> = {}): MachinePoolState {
  return {
    name: 'machinepool-test',
    namespace: 'default',
    clusterName: 'test-cluster',
    specReplicas: 1,
    providerIDList: undefined,
    minReadySeconds: 0,
    deleting: false,
    phase: '',
    bootstrapDataSecretCreated: false,
    infrastructureProvisioned: false,
    statusReplicas: undefined,
    nodeRefs: [],
    v1beta1: { readyReplicas: 0, availableReplicas: 0, unavailableReplicas: 0 },
    ...o,
  };
}

/** A Node as the tests create them: a providerID, and a Ready condition when `ready` is given. */
function node(name: string, providerID: string, ready?: 'True' | 'False', o: Partial<CapiNode> = {}): CapiNode {
  return { name, uid: `uid-${name}`, providerID, conditions: ready ? [{ type: 'Ready', status: ready }] : [], ...o };
}

const ref = (name: string): NodeRef => ({ name });

/** The test's infra object: providerIDList [test://id-1], nothing in status. */
const infra = (o: Partial<InfraMachinePool> = {}): InfraMachinePool => ({
  ready: false,
  providerIDList: ['test://id-1'],
  ...o,
});

const PHASES_T = 'TestReconcileMachinePoolPhases';
const phases = (c: string) => testCase(PHASES_TEST, PHASES_T, c);

const PHASE_CASES: ReconcileCase[] = [
  {
    source: phases('Should set OwnerReference and cluster name label on external objects'),
    notApplicable:
      'it checks what reconcileExternal (phases.go L108–178) writes onto the bootstrap config and infra objects (controller ownerReference, cluster-name label); the simulator has no bootstrap config objects and its AzureMachinePools come from the scenario already owned and labelled (lib/fixtures makeAzureMachinePool)',
    calls: 'doReconcile',
    given: { mp: machinePool(), bootstrapDataSecretCreated: false, infra: infra(), nodes: [] },
    expect: {},
  },
  {
    source: phases('Should set `Pending` with a new MachinePool'),
    calls: 'doReconcile',
    given: { mp: machinePool(), bootstrapDataSecretCreated: false, infra: infra(), nodes: [] },
    expect: { error: false, requeue: false, phase: 'Pending' },
  },
  {
    source: phases('Should set `Provisioning` when bootstrap is ready'),
    calls: 'doReconcile',
    given: { mp: machinePool(), bootstrapDataSecretCreated: true, infra: infra(), nodes: [] },
    expect: { error: false, requeue: false, phase: 'Provisioning' },
  },
  {
    source: phases('Should set `Running` when bootstrap and infra is ready'),
    calls: 'doReconcile',
    given: {
      mp: machinePool({ nodeRefs: [ref('machinepool-test-node')] }),
      bootstrapDataSecretCreated: true,
      infra: infra({ ready: true, replicas: 1, providerIDList: ['test://machinepool-test-node'] }),
      nodes: [],
    },
    thenSet: { v1beta1ReadyReplicas: 1 },
    expect: { error: false, requeue: false, phase: 'Running' },
  },
  {
    source: phases('Should set `Running` when bootstrap, infra, and ready replicas equals spec replicas'),
    calls: 'doReconcile',
    given: {
      mp: machinePool({ nodeRefs: [ref('machinepool-test-node')] }),
      bootstrapDataSecretCreated: true,
      infra: infra({ ready: true, replicas: 1 }),
      nodes: [],
    },
    thenSet: { v1beta1ReadyReplicas: 1 },
    expect: { error: false, requeue: false, phase: 'Running' },
  },
  {
    source: phases('Should set `Provisioned` when there is a NodeRef but infra is not ready '),
    calls: 'doReconcile',
    given: {
      mp: machinePool({ nodeRefs: [ref('machinepool-test-node')] }),
      bootstrapDataSecretCreated: true,
      infra: infra(),
      nodes: [],
    },
    expect: { error: false, requeue: false, phase: 'Provisioned' },
  },
  {
    source: phases('Should set `ScalingUp` when infra is scaling up'),
    calls: 'doReconcile',
    given: {
      mp: machinePool({ nodeRefs: [ref('machinepool-test-node')] }),
      bootstrapDataSecretCreated: true,
      infra: infra({ ready: true, replicas: 1 }),
      nodes: [],
    },
    thenSet: { v1beta1ReadyReplicas: 1, specReplicas: 5 },
    expect: { error: false, requeue: false, phase: 'ScalingUp' },
  },
  {
    source: phases('Should set `ScalingDown` when infra is scaling down'),
    calls: 'doReconcile',
    given: {
      mp: machinePool({ specReplicas: 4, nodeRefs: [0, 1, 2, 3].map((i) => ref(`machinepool-test-node-${i}`)) }),
      bootstrapDataSecretCreated: true,
      infra: infra({ ready: true, replicas: 4 }),
      nodes: [],
    },
    thenSet: { v1beta1ReadyReplicas: 4, specReplicas: 1 },
    expect: { error: false, requeue: false, phase: 'ScalingDown' },
  },
  {
    source: phases('Should set `Deleting` when MachinePool is being deleted'),
    calls: 'doReconcile',
    given: {
      mp: machinePool({ deleting: true, nodeRefs: [ref('machinepool-test-node')] }),
      bootstrapDataSecretCreated: true,
      infra: infra({ ready: true }),
      nodes: [],
    },
    expect: { error: false, requeue: false, phase: 'Deleting' },
  },
  {
    source: phases('Should keep `Running` when MachinePool bootstrap config is changed to another ready one'),
    notModelled:
      'the bootstrap data secret name it also checks (secret-data, then secret-data-new): the simulator has no bootstrap config objects, its MachinePools carry their bootstrap data secret name from the scenario',
    calls: 'doReconcile',
    given: {
      mp: machinePool({
        nodeRefs: [ref('machinepool-test-node')],
        providerIDList: ['test://id-1'],
        statusReplicas: 1,
        v1beta1: { readyReplicas: 1, availableReplicas: 0, unavailableReplicas: 0 },
      }),
      bootstrapDataSecretCreated: true,
      infra: infra({ ready: true, replicas: 1 }),
      nodes: [],
    },
    expect: { error: false, requeue: false, phase: 'Running' },
    again: {
      bootstrapDataSecretCreated: true,
      expect: { error: false, requeue: false, phase: 'Running', bootstrapDataSecretCreated: true },
    },
  },
  {
    source: phases('Should keep `Running` when MachinePool bootstrap config is changed to a non-ready one'),
    notModelled:
      'the bootstrap data secret name it also checks (the old one kept while the new config is not ready): the simulator has no bootstrap config objects',
    calls: 'doReconcile',
    given: {
      mp: machinePool({
        nodeRefs: [ref('machinepool-test-node')],
        providerIDList: ['test://id-1'],
        statusReplicas: 1,
        v1beta1: { readyReplicas: 1, availableReplicas: 0, unavailableReplicas: 0 },
      }),
      bootstrapDataSecretCreated: true,
      infra: infra({ ready: true, replicas: 1 }),
      nodes: [],
    },
    expect: { error: false, requeue: false, phase: 'Running' },
    again: {
      bootstrapDataSecretCreated: false,
      expect: { error: false, requeue: false, phase: 'Running', bootstrapDataSecretCreated: false },
    },
  },
];

const INFRA_T = 'TestReconcileMachinePoolInfrastructure';

const INFRASTRUCTURE_CASES: ReconcileCase[] = [
  {
    source: testCase(PHASES_TEST, INFRA_T, 'new machinepool, infrastructure config ready'),
    calls: 'reconcileInfrastructure',
    given: { mp: machinePool(), bootstrapDataSecretCreated: false, infra: infra({ ready: true }), nodes: [] },
    expect: { error: false, requeue: false, infrastructureProvisioned: true },
  },
  {
    source: testCase(
      PHASES_TEST,
      INFRA_T,
      'ready bootstrap, infra, and nodeRef, machinepool is running, replicas 0, providerIDList not set',
    ),
    notModelled:
      'failureReason and failureMessage it checks are nil: the simulator never sets them (CAPI stopped acting on them in v1.11, docs/domain.md, "MachinePool phases")',
    calls: 'reconcileInfrastructure',
    given: {
      mp: machinePool({
        specReplicas: 0,
        infrastructureProvisioned: true,
        bootstrapDataSecretCreated: true,
        nodeRefs: [ref('machinepool-test-node')],
      }),
      bootstrapDataSecretCreated: true,
      infra: infra({ ready: true, providerIDList: [] }),
      nodes: [],
    },
    expect: {
      error: false,
      requeue: false,
      infrastructureProvisioned: true,
      v1beta1: { readyReplicas: 0, availableReplicas: 0, unavailableReplicas: 0 },
      phase: 'Running',
    },
  },
];

const ZERO_T = 'TestReconcileMachinePoolScaleToFromZero';
const zero = (c: string) => testCase(PHASES_TEST, ZERO_T, c);
/** The test's Node (envtest), Ready without a transition time. */
const zeroNode = () => node('machinepool-test-node', 'test://machinepool-test-node', 'True');
/** The test's infra object: ready, no providerIDList. */
const zeroInfra = (o: Partial<InfraMachinePool>): InfraMachinePool => ({ ready: true, ...o });
/** The test's MachinePool, bootstrap config ready. */
const zeroPool = (o: Partial<MachinePoolState>) => machinePool({ specReplicas: null, ...o });

const SCALE_ZERO_CASES: ReconcileCase[] = [
  {
    source: zero('Should set `ScalingDown` when scaling to zero'),
    calls: 'doReconcile',
    given: {
      mp: zeroPool({ specReplicas: 0, nodeRefs: [ref('machinepool-test-node')] }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({ providerIDList: ['test://machinepool-test-node'], replicas: 1 }),
      nodes: [zeroNode()],
    },
    expect: { error: false, requeue: false, phase: 'ScalingDown', nodesKept: ['machinepool-test-node'] },
  },
  {
    source: zero('Should delete retired nodes when scaled to zero'),
    calls: 'doReconcile',
    given: {
      mp: zeroPool({ specReplicas: 0, nodeRefs: [ref('machinepool-test-node')] }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({ replicas: 0 }),
      nodes: [zeroNode()],
    },
    expect: { error: false, requeue: false, phase: 'Running', nodesDeleted: ['machinepool-test-node'] },
  },
  {
    source: zero('Should set `Running` when scaled to zero'),
    calls: 'doReconcile',
    given: {
      mp: zeroPool({ specReplicas: 0 }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({ replicas: 0 }),
      nodes: [],
    },
    expect: { error: false, requeue: false, phase: 'Running' },
  },
  {
    source: zero('Should set `ScalingUp` when scaling from zero to one'),
    calls: 'doReconcile',
    given: {
      mp: zeroPool({ specReplicas: 1 }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({ replicas: 0 }),
      nodes: [],
    },
    expect: { error: false, requeue: false, phase: 'ScalingUp' },
  },
  {
    source: zero('Should set `Running` when scaled from zero to one'),
    calls: 'doReconcile',
    given: {
      mp: zeroPool({ specReplicas: 1 }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({ providerIDList: ['test://machinepool-test-node'], replicas: 1 }),
      nodes: [zeroNode()],
    },
    expect: { error: false, requeue: false, phase: 'Running', nodesKept: ['machinepool-test-node'] },
  },
];

// ---------------- facts from the code no test asserts ----------------

/** A pool of three listed instances whose Nodes are Ready, nodeRefs not yet set. */
const listed = ['azure:///vm/0', 'azure:///vm/1', 'azure:///vm/2'];
const listedNodes = () =>
  listed.map((id, i) =>
    node(`node-${i}`, id, 'True', {
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-08-21T10:00:00Z' }],
    }),
  );
const T0 = Date.parse('2026-08-21T10:00:00Z');

const CODE_CASES: ReconcileCase[] = [
  {
    source: codeFact(
      NODEREF,
      'reconcileNodeRefs',
      '123-129',
      'no Node matches the list: nodeRefs and the v1beta1 counters stay as they were, no requeue',
    ),
    calls: 'reconcileNodeRefs',
    given: {
      mp: machinePool({
        specReplicas: 3,
        statusReplicas: 3,
        providerIDList: listed,
        nodeRefs: [ref('node-0')],
        v1beta1: { readyReplicas: 2, availableReplicas: 2, unavailableReplicas: 1 },
      }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({}),
      nodes: [],
    },
    expect: {
      error: false,
      requeue: false,
      nodeRefs: ['node-0'],
      v1beta1: { readyReplicas: 2, availableReplicas: 2, unavailableReplicas: 1 },
    },
  },
  {
    source: codeFact(
      NODEREF,
      'reconcileNodeRefs',
      '154-161',
      'ReplicasReady compares status.replicas with the Ready Nodes, not spec.replicas: True while scaling up once the observed replicas are Ready',
    ),
    calls: 'reconcileNodeRefs',
    given: {
      mp: machinePool({ specReplicas: 5, statusReplicas: 3, providerIDList: listed }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({}),
      nodes: listedNodes(),
      now: T0 + 60_000,
    },
    expect: {
      error: false,
      requeue: false,
      replicasReady: 'True',
      nodeRefs: ['node-0', 'node-1', 'node-2'],
      v1beta1: { readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 0 },
    },
  },
  {
    source: codeFact(
      NODEREF,
      'reconcileNodeRefs',
      '154-157',
      'fewer Ready Nodes than status.replicas: ReplicasReady False, look again in 30 s',
    ),
    calls: 'reconcileNodeRefs',
    given: {
      mp: machinePool({ specReplicas: 3, statusReplicas: 4, providerIDList: listed }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({}),
      nodes: listedNodes(),
      now: T0 + 60_000,
    },
    expect: {
      error: false,
      requeue: true,
      replicasReady: 'False',
      v1beta1: { readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 1 },
    },
  },
  {
    source: codeFact(
      NODEREF,
      'reconcileNodeRefs',
      '72-96',
      'status.replicas, ready count and nodeRefs agree and the nodeRefs name live Nodes (name and UID): ReplicasReady True, nothing else is looked at (a Node turned NotReady is not seen)',
    ),
    calls: 'reconcileNodeRefs',
    given: {
      mp: machinePool({
        specReplicas: 1,
        statusReplicas: 1,
        providerIDList: ['azure:///vm/0'],
        nodeRefs: [{ name: 'node-0', uid: 'uid-node-0' }],
        v1beta1: { readyReplicas: 1, availableReplicas: 1, unavailableReplicas: 0 },
        replicasReady: 'False',
      }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({}),
      nodes: [node('node-0', 'azure:///vm/0', 'False')],
    },
    expect: {
      error: false,
      requeue: false,
      replicasReady: 'True',
      v1beta1: { readyReplicas: 1, availableReplicas: 1, unavailableReplicas: 0 },
    },
  },
  {
    source: codeFact(
      NODEREF,
      'getNodeReferences',
      '211-217',
      'a Node Ready for less than minReadySeconds is ready but not available; unavailable counts it',
    ),
    calls: 'reconcileNodeRefs',
    given: {
      mp: machinePool({ specReplicas: 3, statusReplicas: 3, providerIDList: listed, minReadySeconds: 30 }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({}),
      nodes: listedNodes(),
      now: T0 + 20_000,
    },
    expect: {
      requeue: false,
      replicasReady: 'True',
      v1beta1: { readyReplicas: 3, availableReplicas: 0, unavailableReplicas: 3 },
    },
  },
  {
    source: codeFact(
      NODEREF,
      'reconcileNodeRefs',
      '114',
      'a Node in nodeRefs whose providerID left the list is deleted from the workload cluster',
    ),
    calls: 'reconcileNodeRefs',
    given: {
      mp: machinePool({
        specReplicas: 2,
        statusReplicas: 2,
        providerIDList: listed.slice(0, 2),
        nodeRefs: ['node-0', 'node-1', 'node-2'].map(ref),
        v1beta1: { readyReplicas: 0, availableReplicas: 0, unavailableReplicas: 2 },
      }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({}),
      nodes: listedNodes(),
      now: T0 + 60_000,
    },
    expect: {
      requeue: false,
      nodeRefs: ['node-0', 'node-1'],
      nodesDeleted: ['node-2'],
      nodesKept: ['node-0', 'node-1'],
    },
  },
  {
    source: codeFact(
      PHASES,
      'reconcileInfrastructure',
      '297-310',
      'the workload cluster unreachable: infrastructureProvisioned follows the infra object, the list and status.replicas stay, an error',
    ),
    calls: 'doReconcile',
    given: {
      mp: machinePool({ specReplicas: 3, statusReplicas: 2, providerIDList: listed.slice(0, 2) }),
      bootstrapDataSecretCreated: true,
      infra: zeroInfra({ providerIDList: listed, replicas: 3 }),
      nodes: null,
    },
    expect: {
      error: true,
      infrastructureProvisioned: true,
      providerIDList: listed.slice(0, 2),
      statusReplicas: 2,
      phase: 'ScalingUp',
    },
  },
];

export const RECONCILE_CASES: ReconcileCase[] = [
  ...PHASE_CASES,
  ...INFRASTRUCTURE_CASES,
  ...SCALE_ZERO_CASES,
  ...CODE_CASES,
];

// ---------------- getNodeReferences ----------------

export interface NodeReferencesCase extends Common {
  providerIDList: string[];
  minReadySeconds: number;
  /** null: the "no matching Nodes" error. */
  expect: { references: string[]; ready: number; available: number } | null;
}

/** TestMachinePoolGetNodeReference's Nodes: all Ready (no transition time) but node-3, which reports nothing. */
export const NODE_REFERENCE_NODES: CapiNode[] = [
  node('node-1', 'aws://us-east-1/id-node-1', 'True'),
  node('node-2', 'aws://us-west-2/id-node-2', 'True'),
  node('node-3', 'aws://us-west-2/id-node-3'),
  node('gce-node-2', 'gce://us-central1/gce-id-node-2', 'True'),
  node('azure-node-4', 'azure://westus2/id-node-4', 'True'),
  node('azure-nodepool1-0', 'azure://westus2/id-nodepool1/0', 'True'),
  node('azure-nodepool2-0', 'azure://westus2/id-nodepool2/0', 'True'),
];

const getRef = (c: string) => testCase(NODEREF_TEST, 'TestMachinePoolGetNodeReference', c);
const found = (references: string[], ready: number, available = ready) => ({ references, ready, available });

export const NODE_REFERENCE_CASES: NodeReferencesCase[] = [
  {
    source: getRef('valid provider id, valid aws node'),
    providerIDList: ['aws://us-east-1/id-node-1'],
    minReadySeconds: 0,
    expect: found(['node-1'], 1),
  },
  {
    source: getRef('valid provider id, valid aws node#01'),
    providerIDList: ['aws://us-west-2/id-node-2'],
    minReadySeconds: 0,
    expect: found(['node-2'], 1),
  },
  {
    source: getRef('valid provider id, valid aws node, nodeReady condition set to false'),
    providerIDList: ['aws://us-west-2/id-node-3'],
    minReadySeconds: 0,
    expect: found(['node-3'], 0),
  },
  {
    source: getRef('valid provider id, valid gce node'),
    providerIDList: ['gce://us-central1/gce-id-node-2'],
    minReadySeconds: 0,
    expect: found(['gce-node-2'], 1),
  },
  {
    source: getRef('valid provider id, valid azure node'),
    providerIDList: ['azure://westus2/id-node-4'],
    minReadySeconds: 0,
    expect: found(['azure-node-4'], 1),
  },
  {
    source: getRef('valid provider ids, valid azure and aws nodes'),
    providerIDList: ['aws://us-east-1/id-node-1', 'azure://westus2/id-node-4'],
    minReadySeconds: 0,
    expect: found(['node-1', 'azure-node-4'], 2),
  },
  {
    source: getRef('valid provider id, no node found'),
    providerIDList: ['aws:///id-node-100'],
    minReadySeconds: 0,
    expect: null,
  },
  { source: getRef('no provider id, no node found'), providerIDList: [], minReadySeconds: 0, expect: found([], 0) },
  {
    source: getRef('valid provider id with non-unique instance id, valid azure node'),
    providerIDList: ['azure://westus2/id-nodepool1/0'],
    minReadySeconds: 0,
    expect: found(['azure-nodepool1-0'], 1),
  },
  {
    source: getRef('valid provider ids with same instance ids, valid azure nodes'),
    providerIDList: ['azure://westus2/id-nodepool1/0', 'azure://westus2/id-nodepool2/0'],
    minReadySeconds: 0,
    expect: found(['azure-nodepool1-0', 'azure-nodepool2-0'], 2),
  },
  {
    source: getRef('valid provider id, valid aws node, with minReadySeconds'),
    providerIDList: ['aws://us-east-1/id-node-1'],
    minReadySeconds: 20,
    expect: found(['node-1'], 1, 0),
  },
  {
    source: getRef('valid provider id, valid aws node, with minReadySeconds equals 0'),
    providerIDList: ['aws://us-east-1/id-node-1'],
    minReadySeconds: 0,
    expect: found(['node-1'], 1),
  },
];

// ---------------- patchNodes ----------------

export interface PatchNodesCase extends Common {
  mp: Pick<MachinePoolState, 'name' | 'namespace' | 'clusterName'>;
  nodeRefs: string[];
  /** Each named Node after the patch. */
  expect: { name: string; annotations: Record<string, string>; taints: Taint[] }[];
}

const UNINIT: Taint = { key: 'node.cluster.x-k8s.io/uninitialized', effect: 'NoSchedule' };
const OTHER: Taint = { key: 'some-other-taint', value: 'SomeEffect' };
const owned = (cluster: string, ns: string, owner?: string) => ({
  'cluster.x-k8s.io/cluster-name': cluster,
  'cluster.x-k8s.io/cluster-namespace': ns,
  ...(owner ? { 'cluster.x-k8s.io/owner-kind': 'MachinePool', 'cluster.x-k8s.io/owner-name': owner } : {}),
});

/** TestMachinePoolPatchNodes's Nodes. */
export const PATCH_NODES: CapiNode[] = [
  node('node-1', 'aws://us-east-1/id-node-1', undefined, { taints: [UNINIT] }),
  node('node-2', 'aws://us-west-2/id-node-2', undefined, { annotations: { foo: 'bar' }, taints: [OTHER, UNINIT] }),
  node('node-3', 'aws://us-west-2/id-node-3', undefined, {
    annotations: owned('cluster-1', 'my-namespace', 'machinepool-3'),
    taints: [OTHER, UNINIT],
  }),
  node('node-4', 'aws://us-west-2/id-node-4', undefined, {
    annotations: owned('cluster-1', 'my-namespace'),
    taints: [OTHER],
  }),
];

const patch = (c: string) => testCase(NODEREF_TEST, 'TestMachinePoolPatchNodes', c);

export const PATCH_NODES_CASES: PatchNodesCase[] = [
  {
    source: patch('Node with uninitialized taint should be patched'),
    mp: { name: 'machinepool-1', namespace: 'my-namespace', clusterName: 'cluster-1' },
    nodeRefs: ['node-1'],
    expect: [{ name: 'node-1', annotations: owned('cluster-1', 'my-namespace', 'machinepool-1'), taints: [] }],
  },
  {
    source: patch('Node with existing annotations and taints should be patched'),
    mp: { name: 'machinepool-2', namespace: 'my-namespace', clusterName: 'cluster-1' },
    nodeRefs: ['node-2', 'node-3', 'node-4'],
    expect: [
      {
        name: 'node-2',
        annotations: { ...owned('cluster-1', 'my-namespace', 'machinepool-2'), foo: 'bar' },
        taints: [OTHER],
      },
      { name: 'node-3', annotations: owned('cluster-1', 'my-namespace', 'machinepool-2'), taints: [OTHER] },
      { name: 'node-4', annotations: owned('cluster-1', 'my-namespace', 'machinepool-2'), taints: [OTHER] },
    ],
  },
];

// ---------------- setReplicas ----------------

export interface SetReplicasCase extends Common {
  mp: Pick<MachinePoolState, 'specReplicas' | 'statusReplicas' | 'nodeRefs'>;
  hasMachinePoolMachines: boolean;
  machines: MachineView[];
  /** The workload cluster's Nodes (the controller's providerID → Node map). */
  nodes: CapiNode[] | null;
  /** Each field given must match; `versions: null` must be unset. */
  expect: Omit<ReplicaCounters, 'versions'> & { versions?: StatusVersion[] | null };
}

const setRep = (c: string) => testCase(STATUS_TEST, 'Test_setReplicas', c);
const kubelet = (name: string, v: string, i: number) =>
  node(name, `provider-id-${i}`, undefined, { kubeletVersion: v });
const machine = (name: string, o: Partial<MachineView>): MachineView => ({ name, conditions: [], ...o });
const withConditions = (...trueTypes: string[]) =>
  ['Ready', 'Available', 'UpToDate'].map((type) => ({ type, status: trueTypes.includes(type) ? 'True' : 'False' }));

export const SET_REPLICAS_CASES: SetReplicasCase[] = [
  {
    source: setRep('without MachinePool Machines versions are not surfaced'),
    mp: { specReplicas: 3, statusReplicas: 2, nodeRefs: [] },
    hasMachinePoolMachines: false,
    machines: [],
    nodes: null,
    expect: { readyReplicas: 2, availableReplicas: 2, upToDateReplicas: 3, versions: null },
  },
  {
    source: setRep('without MachinePool Machines versions are aggregated from node refs'),
    mp: { specReplicas: null, statusReplicas: undefined, nodeRefs: ['node-1', 'node-2', 'node-3'].map(ref) },
    hasMachinePoolMachines: false,
    machines: [],
    nodes: [kubelet('node-1', 'v1.31.1', 1), kubelet('node-2', 'v1.31.1', 2), kubelet('node-3', 'v1.32.0', 3)],
    expect: {
      versions: [
        { version: 'v1.31.1', replicas: 2 },
        { version: 'v1.32.0', replicas: 1 },
      ],
    },
  },
  {
    source: setRep('with MachinePool Machines versions are aggregated from machine spec versions'),
    mp: { specReplicas: null, statusReplicas: undefined, nodeRefs: [] },
    hasMachinePoolMachines: true,
    nodes: null,
    machines: [
      machine('', { version: 'v1.31.1' }),
      machine('', { version: 'v1.31.1' }),
      machine('', { version: 'v1.32.0' }),
    ],
    expect: {
      versions: [
        { version: 'v1.31.1', replicas: 2 },
        { version: 'v1.32.0', replicas: 1 },
      ],
    },
  },
  {
    source: codeFact(
      STATUS,
      'setReplicas',
      '61-79',
      'with MachinePool Machines the counters are the Machines whose Ready, Available and UpToDate conditions are True, whatever status.replicas says',
    ),
    mp: { specReplicas: 3, statusReplicas: 3, nodeRefs: [] },
    hasMachinePoolMachines: true,
    nodes: null,
    machines: [
      machine('m-0', { conditions: withConditions('Ready', 'Available', 'UpToDate') }),
      machine('m-1', { conditions: withConditions('Ready', 'UpToDate') }),
      machine('m-2', { conditions: withConditions('UpToDate') }),
    ],
    expect: { readyReplicas: 2, availableReplicas: 1, upToDateReplicas: 3 },
  },
];
