// kubectl sends some built-in kinds as Kubernetes protobuf (e.g. `kubectl auth can-i` posts a
// SelfSubjectAccessReview, `kubectl create secret` a Secret). This decodes the envelope, the two access-review
// kinds and Secrets; responses stay JSON, which clients accept. Field numbers are those of k8s.io/api
// (authorization/v1, core/v1) and apimachinery's ObjectMeta.

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Fields = Map<number, (Buffer | number)[]>;

function readVarint(buf: Buffer, pos: number): [number, number] {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++] as number;
    result += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7;
  }
}

function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  let pos = 0;
  while (pos < buf.length) {
    const [tag, p1] = readVarint(buf, pos);
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    let value: Buffer | number;
    if (wire === 0) {
      [value, pos] = readVarint(buf, p1);
    } else if (wire === 2) {
      const [len, p2] = readVarint(buf, p1);
      value = buf.subarray(p2, p2 + len);
      pos = p2 + len;
    } else if (wire === 1) {
      value = 0;
      pos = p1 + 8;
    } else if (wire === 5) {
      value = 0;
      pos = p1 + 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}

const str = (f: Fields, n: number): string | undefined => {
  const v = f.get(n)?.[0];
  return Buffer.isBuffer(v) ? v.toString('utf8') : undefined;
};
const msg = (f: Fields, n: number): Fields => {
  const v = f.get(n)?.[0];
  return Buffer.isBuffer(v) ? fields(v) : new Map();
};

function resourceAttributes(f: Fields): Record<string, string> | undefined {
  if (f.size === 0) return undefined;
  const names = ['', 'namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'];
  const out: Record<string, string> = {};
  names.forEach((name, i) => {
    const v = name ? str(f, i) : undefined;
    if (v !== undefined) out[name] = v;
  });
  return out;
}

export function isKubeProtobuf(body: Buffer): boolean {
  return body.subarray(0, 4).equals(MAGIC);
}

/** Decodes a protobuf SelfSubjectAccessReview or SubjectAccessReview into its JSON form. */
export function decodeAccessReview(body: Buffer): Record<string, unknown> {
  if (!isKubeProtobuf(body)) throw new Error('not a Kubernetes protobuf message');
  const unknown = fields(body.subarray(4));
  const typeMeta = msg(unknown, 1);
  const apiVersion = str(typeMeta, 1);
  const kind = str(typeMeta, 2);
  if (kind !== 'SelfSubjectAccessReview' && kind !== 'SubjectAccessReview') throw new Error(`protobuf is not supported for ${kind ?? 'this kind'}`);
  const obj = fields(unknown.get(2)?.[0] as Buffer);
  const spec = msg(obj, 2);
  const out: Record<string, unknown> = { resourceAttributes: resourceAttributes(msg(spec, 1)) };
  if (kind === 'SubjectAccessReview') {
    out.user = str(spec, 3);
    out.groups = (spec.get(4) ?? []).map((b) => (Buffer.isBuffer(b) ? b.toString('utf8') : ''));
  }
  return { apiVersion, kind, metadata: {}, spec: out };
}

/** A protobuf map<string, bytes|string> field: repeated entries of {1: key, 2: value}. */
function mapField(f: Fields, n: number, asBase64: boolean): Record<string, string> | undefined {
  const entries = f.get(n);
  if (!entries?.length) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    if (!Buffer.isBuffer(e)) continue;
    const kv = fields(e);
    const key = str(kv, 1) ?? '';
    const v = kv.get(2)?.[0];
    const value = Buffer.isBuffer(v) ? v : Buffer.alloc(0);
    out[key] = asBase64 ? value.toString('base64') : value.toString('utf8');
  }
  return out;
}

function objectMeta(f: Fields): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const name = str(f, 1);
  const generateName = str(f, 2);
  const namespace = str(f, 3);
  if (name) meta.name = name;
  if (generateName) meta.generateName = generateName;
  if (namespace) meta.namespace = namespace;
  const labels = mapField(f, 11, false);
  const annotations = mapField(f, 12, false);
  if (labels) meta.labels = labels;
  if (annotations) meta.annotations = annotations;
  return meta;
}

/** Decodes a protobuf core/v1 Secret (as `kubectl create secret` sends it) into its JSON form. */
export function decodeSecret(body: Buffer): Record<string, unknown> {
  if (!isKubeProtobuf(body)) throw new Error('not a Kubernetes protobuf message');
  const unknown = fields(body.subarray(4));
  const typeMeta = msg(unknown, 1);
  if (str(typeMeta, 2) !== 'Secret') throw new Error(`protobuf is not supported for ${str(typeMeta, 2) ?? 'this kind'}`);
  const obj = fields(unknown.get(2)?.[0] as Buffer);
  const out: Record<string, unknown> = { apiVersion: 'v1', kind: 'Secret', metadata: objectMeta(msg(obj, 1)) };
  const data = mapField(obj, 2, true);
  const stringData = mapField(obj, 4, false);
  const type = str(obj, 3);
  if (data) out.data = data;
  if (stringData) out.stringData = stringData;
  if (type) out.type = type;
  return out;
}
