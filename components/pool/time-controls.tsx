'use client';
// Range buttons, time travel (`?at=`) and "Copy link". Every control changes the URL, so what is on screen is
// always what a copied link shows.

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { RANGES, windowQuery, type RangeName, type TimeWindow } from '@/lib/url-state';
import { formatInstant } from '@/components/ui/local-time';

function toLocalInput(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function TimeControls({ path, window: w, shownAt }: { path: string; window: TimeWindow; shownAt: string }) {
  const router = useRouter();
  const [when, setWhen] = useState(toLocalInput(w.at ?? shownAt));
  const [copied, setCopied] = useState<string | null>(null);
  const href = (q: string) => (q ? `${path}?${q}` : path);

  const copy = async () => {
    // A link to "now" would show something else tomorrow: pin it to the instant on screen.
    const q = windowQuery({ ...w, at: w.at ?? shownAt });
    const url = `${window.location.origin}${href(q)}`;
    try {
      await navigator.clipboard.writeText(url);
      // The app's one time format: the viewer's zone, and UTC beside it.
      const shown = w.at ?? shownAt;
      setCopied(
        `Link copied: it shows this pool as of ${formatInstant(shown, undefined)} (${formatInstant(shown, 'UTC')}).`,
      );
    } catch {
      setCopied(`Copy this link: ${url}`);
    }
  };

  return (
    <div className="flex flex-wrap items-center gap-x-6 gap-y-2 text-sm">
      <nav aria-label="Time range" className="flex items-center gap-1">
        {(Object.keys(RANGES) as RangeName[]).map((r) => (
          <Link
            key={r}
            href={href(windowQuery({ range: r, from: '', to: '', at: w.at }))}
            aria-current={w.range === r ? 'page' : undefined}
            scroll={false}
            className={`rounded px-2 py-1 ${w.range === r ? 'bg-slate-900 text-white dark:bg-slate-100 dark:text-slate-900' : 'border border-slate-300 dark:border-slate-700'}`}
          >
            {r}
          </Link>
        ))}
      </nav>
      <form
        className="flex items-center gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          const t = Date.parse(when);
          if (Number.isNaN(t)) return;
          router.push(href(windowQuery({ ...w, at: new Date(t).toISOString() })), { scroll: false });
        }}
      >
        <label className="flex items-center gap-2">
          <span>Show the state at</span>
          <input
            type="datetime-local"
            step={1}
            value={when}
            onChange={(e) => setWhen(e.target.value)}
            className="rounded border border-slate-300 bg-white px-2 py-1 dark:border-slate-700 dark:bg-slate-900"
          />
        </label>
        <button type="submit" className="rounded border border-slate-300 px-2 py-1 dark:border-slate-700">
          Go
        </button>
        {w.at ? (
          <Link href={href(windowQuery({ ...w, at: null }))} className="underline" scroll={false}>
            Back to now
          </Link>
        ) : null}
      </form>
      <button
        type="button"
        onClick={() => void copy()}
        className="rounded bg-sky-700 px-3 py-1 font-medium text-white hover:bg-sky-800"
      >
        Copy link
      </button>
      <span role="status" className="text-slate-600 dark:text-slate-300">
        {copied ?? ''}
      </span>
    </div>
  );
}
