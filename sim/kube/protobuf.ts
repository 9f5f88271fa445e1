// Kubernetes protobuf (application/vnd.kubernetes.protobuf), as kubectl sends built-in kinds: `kubectl create
// namespace|configmap|secret|serviceaccount|role|rolebinding|…`, the access reviews of `kubectl auth can-i`, a
// Scale. One generic decoder walks the wire format with a small field table per message (numbers from k8s.io/api
// and apimachinery's generated.proto) and yields the object's JSON form; responses stay JSON, which clients accept.

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Scalar = 'string' | 'bytes' | 'int' | 'bool' | 'time';

interface Field {
  name: string;
  type: Scalar | Message | { map: 'string' | 'bytes' | Message };
  repeated?: true;
  /** Printed even when zero or false: a pointer in Go (present on the wire only when set). */
  keep?: true;
}

interface Message {
  name: string;
  fields: Record<number, Field>;
}

/**
 * A body this decoder cannot read: malformed, or `unsupported` — well-formed, but of a kind (or with a field set)
 * it has no table for; then the message says what, as "not for apps/v1 Deployment".
 */
export class ProtobufError extends Error {
  constructor(
    message: string,
    readonly unsupported = false,
  ) {
    super(message);
  }
}

const msg = (name: string, fields: Record<number, Field>): Message => ({ name, fields });
const s = (name: string): Field => ({ name, type: 'string' });
const strings = (name: string): Field => ({ name, type: 'string', repeated: true });
const sub = (name: string, type: Message, repeated?: true): Field => ({
  name,
  type,
  ...(repeated ? { repeated } : {}),
});

const TIME = msg('Time', { 1: { name: 'seconds', type: 'int' }, 2: { name: 'nanos', type: 'int' } });
const TYPE_META = msg('TypeMeta', { 1: s('apiVersion'), 2: s('kind') });
const OWNER_REFERENCE = msg('OwnerReference', {
  1: s('kind'),
  3: s('name'),
  4: s('uid'),
  5: s('apiVersion'),
  6: { name: 'controller', type: 'bool', keep: true },
  7: { name: 'blockOwnerDeletion', type: 'bool', keep: true },
});
// managedFields (17) is left out: a client sending it is told so rather than having it dropped.
const OBJECT_META = msg('ObjectMeta', {
  1: s('name'),
  2: s('generateName'),
  3: s('namespace'),
  4: s('selfLink'),
  5: s('uid'),
  6: s('resourceVersion'),
  7: { name: 'generation', type: 'int' },
  8: { name: 'creationTimestamp', type: 'time' },
  9: { name: 'deletionTimestamp', type: 'time' },
  10: { name: 'deletionGracePeriodSeconds', type: 'int', keep: true },
  11: { name: 'labels', type: { map: 'string' } },
  12: { name: 'annotations', type: { map: 'string' } },
  13: sub('ownerReferences', OWNER_REFERENCE, true),
  14: strings('finalizers'),
});
const REQUIREMENT = msg('SelectorRequirement', { 1: s('key'), 2: s('operator'), 3: strings('values') });
const LABEL_SELECTOR = msg('LabelSelector', {
  1: { name: 'matchLabels', type: { map: 'string' } },
  2: sub('matchExpressions', REQUIREMENT, true),
});
const meta: Field = sub('metadata', OBJECT_META);

const NAMESPACE = msg('Namespace', {
  1: meta,
  2: sub('spec', msg('NamespaceSpec', { 1: strings('finalizers') })),
  3: sub(
    'status',
    msg('NamespaceStatus', {
      1: s('phase'),
      2: sub(
        'conditions',
        msg('NamespaceCondition', {
          1: s('type'),
          2: s('status'),
          4: { name: 'lastTransitionTime', type: 'time' },
          5: s('reason'),
          6: s('message'),
        }),
        true,
      ),
    }),
  ),
});
const CONFIG_MAP = msg('ConfigMap', {
  1: meta,
  2: { name: 'data', type: { map: 'string' } },
  3: { name: 'binaryData', type: { map: 'bytes' } },
  4: { name: 'immutable', type: 'bool', keep: true },
});
const SECRET = msg('Secret', {
  1: meta,
  2: { name: 'data', type: { map: 'bytes' } },
  3: s('type'),
  4: { name: 'stringData', type: { map: 'string' } },
  5: { name: 'immutable', type: 'bool', keep: true },
});
const SERVICE_ACCOUNT = msg('ServiceAccount', {
  1: meta,
  2: sub(
    'secrets',
    msg('ObjectReference', {
      1: s('kind'),
      2: s('namespace'),
      3: s('name'),
      4: s('uid'),
      5: s('apiVersion'),
      6: s('resourceVersion'),
      7: s('fieldPath'),
    }),
    true,
  ),
  3: sub('imagePullSecrets', msg('LocalObjectReference', { 1: s('name') }), true),
  4: { name: 'automountServiceAccountToken', type: 'bool', keep: true },
});

const POLICY_RULE = msg('PolicyRule', {
  1: strings('verbs'),
  2: strings('apiGroups'),
  3: strings('resources'),
  4: strings('resourceNames'),
  5: strings('nonResourceURLs'),
});
const SUBJECT = msg('Subject', { 1: s('kind'), 2: s('apiGroup'), 3: s('name'), 4: s('namespace') });
const ROLE_REF = msg('RoleRef', { 1: s('apiGroup'), 2: s('kind'), 3: s('name') });
const ROLE = msg('Role', { 1: meta, 2: sub('rules', POLICY_RULE, true) });
const CLUSTER_ROLE = msg('ClusterRole', {
  1: meta,
  2: sub('rules', POLICY_RULE, true),
  3: sub('aggregationRule', msg('AggregationRule', { 1: sub('clusterRoleSelectors', LABEL_SELECTOR, true) })),
});
const ROLE_BINDING = msg('RoleBinding', { 1: meta, 2: sub('subjects', SUBJECT, true), 3: sub('roleRef', ROLE_REF) });

const SCALE = msg('Scale', {
  1: meta,
  2: sub('spec', msg('ScaleSpec', { 1: { name: 'replicas', type: 'int' } })),
  // status.replicas has no omitempty in Go: printed even when 0.
  3: sub('status', msg('ScaleStatus', { 1: { name: 'replicas', type: 'int', keep: true }, 2: s('selector') })),
});

const SELECTOR_ATTRIBUTES = (name: string) =>
  msg(name, { 1: s('rawSelector'), 2: sub('requirements', REQUIREMENT, true) });
const RESOURCE_ATTRIBUTES = msg('ResourceAttributes', {
  1: s('namespace'),
  2: s('verb'),
  3: s('group'),
  4: s('version'),
  5: s('resource'),
  6: s('subresource'),
  7: s('name'),
  8: sub('fieldSelector', SELECTOR_ATTRIBUTES('FieldSelectorAttributes')),
  9: sub('labelSelector', SELECTOR_ATTRIBUTES('LabelSelectorAttributes')),
});
const NON_RESOURCE_ATTRIBUTES = msg('NonResourceAttributes', { 1: s('path'), 2: s('verb') });
// What a client sends as status (all zero): read so it is not mistaken for an unknown field.
const ACCESS_REVIEW_STATUS = msg('SubjectAccessReviewStatus', {
  1: { name: 'allowed', type: 'bool' },
  2: s('reason'),
  3: s('evaluationError'),
  4: { name: 'denied', type: 'bool' },
});
// spec.extra (5) is left out (map<string, ExtraValue>); a review carrying it is told so.
const SUBJECT_ACCESS_REVIEW = msg('SubjectAccessReview', {
  1: meta,
  2: sub(
    'spec',
    msg('SubjectAccessReviewSpec', {
      1: sub('resourceAttributes', RESOURCE_ATTRIBUTES),
      2: sub('nonResourceAttributes', NON_RESOURCE_ATTRIBUTES),
      3: s('user'),
      4: strings('groups'),
      6: s('uid'),
    }),
  ),
  3: sub('status', ACCESS_REVIEW_STATUS),
});
const SELF_SUBJECT_ACCESS_REVIEW = msg('SelfSubjectAccessReview', {
  1: meta,
  2: sub(
    'spec',
    msg('SelfSubjectAccessReviewSpec', {
      1: sub('resourceAttributes', RESOURCE_ATTRIBUTES),
      2: sub('nonResourceAttributes', NON_RESOURCE_ATTRIBUTES),
    }),
  ),
  3: sub('status', ACCESS_REVIEW_STATUS),
});
const TOKEN_REVIEW = msg('TokenReview', {
  1: meta,
  2: sub('spec', msg('TokenReviewSpec', { 1: s('token'), 2: strings('audiences') })),
  3: sub(
    'status',
    msg('TokenReviewStatus', { 1: { name: 'authenticated', type: 'bool' }, 3: s('error'), 4: strings('audiences') }),
  ),
});

/** The kinds this decoder reads, by apiVersion and kind. */
const KINDS = new Map<string, Message>([
  ['v1 Namespace', NAMESPACE],
  ['v1 ConfigMap', CONFIG_MAP],
  ['v1 Secret', SECRET],
  ['v1 ServiceAccount', SERVICE_ACCOUNT],
  ['rbac.authorization.k8s.io/v1 Role', ROLE],
  ['rbac.authorization.k8s.io/v1 ClusterRole', CLUSTER_ROLE],
  ['rbac.authorization.k8s.io/v1 RoleBinding', ROLE_BINDING],
  ['rbac.authorization.k8s.io/v1 ClusterRoleBinding', { ...ROLE_BINDING, name: 'ClusterRoleBinding' }],
  ['autoscaling/v1 Scale', SCALE],
  ['authorization.k8s.io/v1 SubjectAccessReview', SUBJECT_ACCESS_REVIEW],
  ['authorization.k8s.io/v1 SelfSubjectAccessReview', SELF_SUBJECT_ACCESS_REVIEW],
  ['authentication.k8s.io/v1 TokenReview', TOKEN_REVIEW],
]);

/** The kinds the decoder reads, for messages: `Namespace, ConfigMap, …`. */
export const PROTOBUF_KINDS: readonly string[] = [...KINDS.keys()].map((k) => k.split(' ')[1] as string);

interface WireField {
  n: number;
  wire: number;
  value: bigint | Buffer;
}

function readVarint(buf: Buffer, pos: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length || shift > 63n) throw new ProtobufError('truncated or overlong varint');
    const b = buf[pos++] as number;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
  }
}

function bytesAt(buf: Buffer, pos: number, len: number): Buffer {
  if (pos + len > buf.length) throw new ProtobufError('truncated field');
  return buf.subarray(pos, pos + len);
}

function wireFields(buf: Buffer): WireField[] {
  const out: WireField[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [tag, p1] = readVarint(buf, pos);
    const n = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const [v, p2] = readVarint(buf, p1);
      out.push({ n, wire, value: v });
      pos = p2;
    } else if (wire === 2) {
      const [len, p2] = readVarint(buf, p1);
      out.push({ n, wire, value: bytesAt(buf, p2, Number(len)) });
      pos = p2 + Number(len);
    } else if (wire === 1 || wire === 5) {
      const len = wire === 1 ? 8 : 4;
      out.push({ n, wire, value: bytesAt(buf, p1, len) });
      pos = p1 + len;
    } else throw new ProtobufError(`unsupported wire type ${wire}`);
  }
  return out;
}

/** Zero, empty or all-zero bytes: what the generated encoders write for a field that is not set. */
const isUnset = (f: WireField) => (Buffer.isBuffer(f.value) ? f.value.every((b) => b === 0) : f.value === 0n);

function scalar(f: WireField, type: Scalar, where: string): string | number | boolean | undefined {
  const want = type === 'int' || type === 'bool' ? 0 : 2;
  if (f.wire !== want) throw new ProtobufError(`field ${f.n} of ${where} has wire type ${f.wire}, expected ${want}`);
  const v = f.value;
  switch (type) {
    case 'string':
      return (v as Buffer).toString('utf8');
    case 'bytes':
      return (v as Buffer).toString('base64');
    case 'int':
      return Number(BigInt.asIntN(64, v as bigint));
    case 'bool':
      return v !== 0n;
    case 'time': {
      const t = decodeMessage(v as Buffer, TIME, where);
      return t.seconds === undefined
        ? undefined
        : new Date(Number(t.seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    }
  }
}

function mapEntry(f: WireField, value: 'string' | 'bytes' | Message, where: string): [string, unknown] {
  if (f.wire !== 2) throw new ProtobufError(`map field ${f.n} of ${where} has wire type ${f.wire}`);
  let key = '';
  let val: unknown = typeof value === 'string' ? '' : {};
  for (const e of wireFields(f.value as Buffer)) {
    if (e.n === 1) key = scalar(e, 'string', where) as string;
    else if (e.n === 2)
      val = typeof value === 'string' ? scalar(e, value, where) : decodeMessage(e.value as Buffer, value, where);
  }
  return [key, val];
}

/** One message's JSON form: fields by their names, zero values left out unless `keep`, lists and maps gathered. */
function decodeMessage(buf: Buffer, m: Message, where: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const at = where === m.name ? where : `${m.name} in ${where}`;
  for (const f of wireFields(buf)) {
    const field = m.fields[f.n];
    if (!field) {
      if (isUnset(f)) continue;
      throw new ProtobufError(`not field ${f.n} of ${at}, which this body sets`, true);
    }
    const t = field.type;
    if (typeof t === 'object' && 'map' in t) {
      const [k, v] = mapEntry(f, t.map, at);
      out[field.name] = { ...(out[field.name] as Record<string, unknown> | undefined), [k]: v };
      continue;
    }
    let v: unknown;
    if (typeof t === 'string') v = scalar(f, t, at);
    else if (f.wire !== 2) throw new ProtobufError(`field ${f.n} of ${at} has wire type ${f.wire}, expected 2`);
    else v = decodeMessage(f.value as Buffer, t, at);
    if (field.repeated) out[field.name] = [...((out[field.name] as unknown[] | undefined) ?? []), v];
    else if (v !== undefined && (field.keep || (v !== '' && v !== 0 && v !== false))) out[field.name] = v;
  }
  return out;
}

function isKubeProtobuf(body: Buffer): boolean {
  return body.subarray(0, 4).equals(MAGIC);
}

/**
 * Decodes a Kubernetes protobuf body (the `k8s\0` prefix, then a runtime.Unknown envelope) into the object's JSON
 * form. Throws ProtobufError: `unsupported` for a kind or a set field without a table here, otherwise malformed.
 */
export function decodeKubeProtobuf(body: Buffer): Record<string, unknown> {
  if (!isKubeProtobuf(body))
    throw new ProtobufError('the body does not start with the Kubernetes protobuf prefix "k8s\\0"');
  let typeMeta: Record<string, unknown> = {};
  let raw: Buffer = Buffer.alloc(0);
  for (const f of wireFields(body.subarray(4))) {
    if (f.n === 1 && f.wire === 2) typeMeta = decodeMessage(f.value as Buffer, TYPE_META, 'the envelope');
    else if (f.n === 2 && f.wire === 2) raw = f.value as Buffer;
    else if (!isUnset(f))
      throw new ProtobufError(`not an envelope with field ${f.n} (a content encoding or type) set`, true);
  }
  const { apiVersion, kind } = typeMeta as { apiVersion?: string; kind?: string };
  const table = KINDS.get(`${apiVersion} ${kind}`);
  if (!table) throw new ProtobufError(`not for ${apiVersion ?? '(no apiVersion)'} ${kind ?? '(no kind)'}`, true);
  return { apiVersion, kind, ...decodeMessage(raw, table, table.name) };
}
