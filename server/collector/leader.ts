import 'server-only';
// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: take the Lease when
// it is free or expired, renew it while leading, and let go (stop collecting) when a renewal fails.

import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';

export interface LeaderOptions {
  kubeconfig: KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  leaseSeconds?: number;
  renewSeconds?: number;
  onStartedLeading: () => void | Promise<void>;
  onStoppedLeading: () => void | Promise<void>;
  now?: () => Date;
}

export class LeaderElector {
  private timer: NodeJS.Timeout | null = null;
  private leading = false;
  private stopped = false;
  private readonly api: CoordinationV1Api;

  constructor(private readonly opts: LeaderOptions) {
    this.api = opts.kubeconfig.makeApiClient(CoordinationV1Api);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  private now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  /** One attempt to acquire or renew; true when this process holds the Lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.opts;
    const duration = this.opts.leaseSeconds ?? 15;
    const now = this.now();
    let lease: V1Lease | null = null;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (e) {
      if ((e as { code?: number }).code !== 404) return false;
    }
    // client-node serializes Date fields itself (MicroTime).
    const spec = { holderIdentity: identity, leaseDurationSeconds: duration, renewTime: now as never };
    try {
      if (!lease) {
        await this.api.createNamespacedLease({
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec: { ...spec, acquireTime: now as never, leaseTransitions: 0 },
          },
        });
        return true;
      }
      const holder = lease.spec?.holderIdentity;
      const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime as unknown as string).getTime() : 0;
      const expired = renewed + (lease.spec?.leaseDurationSeconds ?? duration) * 1000 < now.getTime();
      if (holder && holder !== identity && !expired) return false;
      const transitions = (lease.spec?.leaseTransitions ?? 0) + (holder === identity ? 0 : 1);
      // The resourceVersion makes this a compare-and-swap: two candidates cannot both win.
      await this.api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          ...lease,
          spec: {
            ...lease.spec,
            ...spec,
            leaseTransitions: transitions,
            ...(holder === identity ? {} : { acquireTime: now as never }),
          },
        },
      });
      return true;
    } catch {
      return false;
    }
  }

  start(): void {
    const loop = async () => {
      if (this.stopped) return;
      const ok = await this.tryAcquireOrRenew();
      if (ok && !this.leading) {
        this.leading = true;
        await this.opts.onStartedLeading();
      } else if (!ok && this.leading) {
        this.leading = false;
        await this.opts.onStoppedLeading();
      }
      if (!this.stopped) this.timer = setTimeout(() => void loop(), (this.opts.renewSeconds ?? 5) * 1000);
    };
    void loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.leading) {
      this.leading = false;
      await this.opts.onStoppedLeading();
      await this.release();
    }
  }

  /** On a clean shutdown, hand the Lease back (as client-go's ReleaseOnCancel) so a follower need not wait for it to expire. */
  private async release(): Promise<void> {
    const { namespace, name, identity } = this.opts;
    try {
      const lease = await this.api.readNamespacedLease({ name, namespace });
      if (lease.spec?.holderIdentity !== identity) return;
      await this.api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          ...lease,
          spec: { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: this.now() as never },
        },
      });
    } catch {
      // The Lease then simply expires.
    }
  }
}
