import 'server-only';
// The only reader of process.env: every setting, validated once at start-up. A wrong value stops start-up
// with a message naming the variable and what it expects — never a stack trace.

import { z } from 'zod';

const bool = (dflt: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
    .optional()
    .transform((v) => (v === undefined || v === '' ? dflt : v === 'true' || v === '1' || v === 'yes'));

const seconds = (dflt: number, min = 1) =>
  z.coerce
    .number()
    .int()
    .min(min)
    .optional()
    .transform((v) => v ?? dflt);

/** Bytes per unit of a size: Kubernetes quantities (Ki, Mi, Gi, Ti; k, M, G, T) and plain bytes. */
const SIZE_UNITS: Record<string, number> = {
  '': 1,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
};

/** A size like `4Gi`, `500M` or `1073741824` (bytes), or undefined when unset. */
const size = () =>
  z
    .string()
    .trim()
    .optional()
    .refine((v) => !v || /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$/.test(v), {
      message: 'must be a size such as 4Gi, 500Mi, 2G or a number of bytes',
    })
    .transform((v) => {
      if (!v) return undefined;
      const m = /^(\d+(?:\.\d+)?)(\D*)$/.exec(v) as RegExpExecArray;
      return Math.round(Number(m[1]) * (SIZE_UNITS[m[2] as string] as number));
    })
    .refine((v) => v === undefined || v >= 2 ** 20, { message: 'must be at least 1Mi' });

const schema = z
  .object({
    KUBECONFIG: z.string().optional(),
    POOLSCOPE_CONTEXTS: z
      .string()
      .optional()
      .transform((v, ctx) => {
        const t = (v ?? '').trim();
        if (!t) return { mode: 'current' as const };
        if (t === '*') return { mode: 'all' as const };
        const names = t
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        // A list of nothing (`,`) would start poolscope watching no cluster at all, quietly.
        if (names.length === 0) {
          ctx.addIssue({
            code: 'custom',
            message:
              'names no context: give kubeconfig context names separated by commas, * for all, or leave it unset for the current context',
          });
          return z.NEVER;
        }
        return { mode: 'list' as const, names };
      }),
    DATABASE_URL: z
      .string()
      .optional()
      .refine((v) => v === undefined || v === '' || /^postgres(ql)?:\/\/[^\s]+$/.test(v), {
        message: 'must be a PostgreSQL URL like postgres://user:password@host:5432/dbname',
      }),
    POOLSCOPE_DB_PATH: z.string().min(1).default('./data/poolscope.db'),
    POOLSCOPE_ARM_ENDPOINT: z.string().url().default('https://management.azure.com'),
    POOLSCOPE_AZURE_DISABLE_INSTANCE_DISCOVERY: bool(false),
    POOLSCOPE_AZURE_BUDGET_SHARE: z.coerce.number().gt(0).max(1).default(0.1),
    POOLSCOPE_FAST_INTERVAL_SECONDS: seconds(15),
    POOLSCOPE_SLOW_INTERVAL_SECONDS: seconds(120),
    POOLSCOPE_FROZEN_CRITICAL_AFTER_SECONDS: seconds(600, 0),
    POOLSCOPE_RETENTION_DAYS: seconds(30),
    POOLSCOPE_RETENTION_MAX_SIZE: size(),
    POOLSCOPE_COLLECTOR: bool(true),
    POOLSCOPE_LEADER_ELECTION: bool(false),
    POOLSCOPE_LEADER_NAMESPACE: z.string().min(1).default('poolscope'),
    POOLSCOPE_LEADER_LEASE: z.string().min(1).default('poolscope-collector'),
    POD_NAME: z.string().optional(),
    POOLSCOPE_READ_ONLY: bool(false),
    POOLSCOPE_TRUSTED_PROXY: z
      .string()
      .trim()
      .optional()
      .transform((v) => v || undefined),
    POOLSCOPE_TRUSTED_PROXY_SECRET: z
      .string()
      .optional()
      .transform((v) => v || undefined)
      .refine((v) => v === undefined || v.length >= 32, {
        message: 'must be at least 32 characters (e.g. `openssl rand -hex 32`)',
      }),
    POOLSCOPE_RESYNC_WAIT_SECONDS: seconds(20, 0),
    POOLSCOPE_KUBE_TIMEOUT_SECONDS: seconds(10),
    POOLSCOPE_SHUTDOWN_GRACE_SECONDS: seconds(25),
    POOLSCOPE_LOG_LEVEL: z
      .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
        message: 'must be one of trace, debug, info, warn, error, fatal, silent',
      })
      .default('info'),
  })
  .superRefine((e, ctx) => {
    // PostgreSQL keeps deleted rows' space until VACUUM: its size does not follow what pruning deletes.
    if (e.POOLSCOPE_RETENTION_MAX_SIZE !== undefined && e.DATABASE_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['POOLSCOPE_RETENTION_MAX_SIZE'],
        message:
          'applies to the SQLite store only; with DATABASE_URL, size the database and shorten POOLSCOPE_RETENTION_DAYS instead',
      });
    }
    // Proxy headers name the user; only a proxy that proves itself with the shared secret may send them.
    if (e.POOLSCOPE_TRUSTED_PROXY && !e.POOLSCOPE_TRUSTED_PROXY_SECRET) {
      ctx.addIssue({
        code: 'custom',
        path: ['POOLSCOPE_TRUSTED_PROXY_SECRET'],
        message: 'is required when POOLSCOPE_TRUSTED_PROXY is set: the proxy sends it in X-Poolscope-Proxy-Secret',
      });
    }
    if (e.POOLSCOPE_TRUSTED_PROXY_SECRET && !e.POOLSCOPE_TRUSTED_PROXY) {
      ctx.addIssue({
        code: 'custom',
        path: ['POOLSCOPE_TRUSTED_PROXY'],
        message: 'must name the auth proxy (e.g. oauth2-proxy) when POOLSCOPE_TRUSTED_PROXY_SECRET is set',
      });
    }
  });

export type Env = z.output<typeof schema>;

export class ConfigError extends Error {}

/**
 * A variable's value as a configuration error may show it (logs, and the 503 an API reader gets): a secret's
 * never, only its length; a password inside a URL or a connection string as `***`.
 */
function shownValue(name: string, value: string): string {
  if (/SECRET|PASSWORD|TOKEN/i.test(name)) return value === '' ? '""' : `(${value.length} characters, not shown)`;
  const hidden = value
    // scheme://user:password@host: the password runs to the last @ (it may hold @ or / itself, unencoded).
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*:).*@/i, '$1***@')
    // password=… in a query string or a libpq key/value connection string.
    .replace(/(password=)[^&\s]*/gi, '$1***');
  return JSON.stringify(hidden);
}

/** Parses settings from an environment (process.env by default); throws ConfigError naming each bad variable. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const r = schema.safeParse(source);
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => {
    const name = String(i.path[0] ?? '?');
    return `  ${name}=${shownValue(name, source[name] ?? '')}: ${i.message}`;
  });
  throw new ConfigError(`poolscope configuration is invalid:\n${lines.join('\n')}`);
}

let cached: Env | null = null;

/** The validated settings of this process (parsed on first use). */
export function env(): Env {
  cached ??= parseEnv();
  return cached;
}
