import { driftKindLabel, type DriftKind, type PoolFlavour } from '@/lib/api-types';
import { Badge, driftTone } from '@/components/ui/badge';

export function DriftBadges({
  counts,
  flavour = 'self-managed',
}: {
  counts: Partial<Record<DriftKind, number>>;
  /** The pool's flavour: the infra list is named after its kind (AMP, AMMP, ASO-MP). */
  flavour?: PoolFlavour;
}) {
  const entries = Object.entries(counts).filter(([, n]) => (n ?? 0) > 0) as [DriftKind, number][];
  if (entries.length === 0) return <span className="text-slate-500 dark:text-slate-400">none</span>;
  return (
    <span className="flex flex-wrap gap-1">
      {entries.map(([kind, n]) => (
        <Badge key={kind} tone={driftTone(kind)} title={kind}>
          <span data-drift-kind={kind}>
            {driftKindLabel(kind, flavour)}: {n}
          </span>
        </Badge>
      ))}
    </span>
  );
}
