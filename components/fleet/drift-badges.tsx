import { DRIFT_KIND_LABELS, type DriftKind } from '@/lib/api-types';
import { Badge, driftTone } from '@/components/ui/badge';

export function DriftBadges({ counts }: { counts: Partial<Record<DriftKind, number>> }) {
  const entries = Object.entries(counts).filter(([, n]) => (n ?? 0) > 0) as [DriftKind, number][];
  if (entries.length === 0) return <span className="text-slate-500 dark:text-slate-400">none</span>;
  return (
    <span className="flex flex-wrap gap-1">
      {entries.map(([kind, n]) => (
        <Badge key={kind} tone={driftTone(kind)} title={kind}>
          <span data-drift-kind={kind}>
            {DRIFT_KIND_LABELS[kind] ?? kind}: {n}
          </span>
        </Badge>
      ))}
    </span>
  );
}
