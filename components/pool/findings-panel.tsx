import { headline } from '@/lib/diagnosis';
import type { Finding } from '@/lib/api-types';
import { StateBadge } from '@/components/ui/badge';
import { Breakable } from '@/components/ui/breakable';
import { useLiveNow } from '@/components/ui/use-live-now';

/**
 * The diagnosis in plain words, worst first; evidence and the suggested action one click away. `at` is the state's
 * instant: live (`live`), durations count on from it.
 */
export function FindingsPanel({ findings, at, live }: { findings: Finding[]; at: string; live: boolean }) {
  const now = useLiveNow(at, live);
  return (
    <section aria-labelledby="findings-h" className="space-y-2">
      <h2 id="findings-h" className="text-lg font-semibold">Diagnosis</h2>
      <ul className="space-y-2">
        {findings.map((f) => (
          <li key={f.code} data-finding={f.code} className="rounded border border-slate-200 p-3 dark:border-slate-800">
            <p className="flex items-start gap-2">
              <StateBadge value={f.severity} />
              <span className="min-w-0 font-medium wrap-anywhere"><Breakable text={headline(f, now)} /></span>
            </p>
            <details className="mt-1 text-sm text-slate-700 wrap-anywhere dark:text-slate-300">
              <summary className="cursor-pointer select-none">Why, and what to do</summary>
              <p className="mt-1">{f.detail}</p>
              <p className="mt-1"><span className="font-medium">Suggested: </span>{f.suggestedAction}</p>
            </details>
          </li>
        ))}
      </ul>
    </section>
  );
}
