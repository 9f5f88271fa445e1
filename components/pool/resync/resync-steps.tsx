import type { ResyncStep } from '@/lib/api-types';
import { LocalTime } from '@/components/ui/local-time';

/** A resync's steps with their times, as they happen (`running`) or as they happened. */
export function ResyncSteps({ steps, running = false }: { steps: readonly ResyncStep[]; running?: boolean }) {
  if (!running && steps.length === 0) return null;
  return (
    <section aria-label="Steps" data-testid="resync-steps" className="space-y-1 text-sm">
      {running ? (
        <p role="status">{steps.length ? 'Working; the steps so far:' : 'Starting…'}</p>
      ) : (
        <p className="font-medium">Steps</p>
      )}
      <ol className="space-y-0.5">
        {steps.map((s) => (
          <li key={`${s.at} ${s.code}`} data-step={s.code} className="flex gap-2">
            <LocalTime iso={s.at} withDate={false} className="shrink-0 font-mono text-xs" />
            <span>{s.text}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
