// API errors as a real Kubernetes API server sends them: a `Status` object with code, reason and message.

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'NotAcceptable';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: { reason?: string; message: string; field?: string }[];
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

/** `machinepools.cluster.x-k8s.io "pool0"` — how the API server names an object in messages. */
export function qualified(plural: string, group: string, name?: string): string {
  const r = group ? `${plural}.${group}` : plural;
  return name === undefined ? r : `${r} "${name}"`;
}

export const notFound = (plural: string, group: string, name: string) =>
  new ApiError(404, 'NotFound', `${qualified(plural, group, name)} not found`, { name, group, kind: plural });

export const conflict = (plural: string, group: string, name: string) =>
  new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(plural, group, name)}: the object has been modified; please apply your changes to the latest version and try again`,
    { name, group, kind: plural },
  );

export const badRequest = (message: string) => new ApiError(400, 'BadRequest', message);

export function invalid(
  kind: string,
  group: string,
  name: string,
  causes: { field: string; message: string }[],
): ApiError {
  const text = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
  return new ApiError(422, 'Invalid', `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${text}`, {
    name,
    group,
    kind,
    causes: causes.map((c) => ({ reason: 'FieldValueInvalid', message: c.message, field: c.field })),
  });
}
