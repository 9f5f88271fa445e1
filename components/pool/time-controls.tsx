'use client';
// Range buttons, time travel (`?at=`) and "Copy link". Every control changes the URL, so what is on screen is
// always what a copied link shows.

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useId, useState } from 'react';
import { readTypedInstant, TYPED_EXAMPLE } from '@/lib/typed-instant';
import { futureAtError, RANGES, windowQuery, type RangeName, type TimeWindow } from '@/lib/url-state';
import { formatInstant, useIsClient } from '@/components/ui/local-time';

export function TimeControls({ path, window: w, shownAt }: { path: string; window: TimeWindow; shownAt: string }) {
  const router = useRouter();
  const client = useIsClient();
  // What was typed, until it is gone to; else the instant shown, in the app's format (UTC until hydrated, as
  // LocalTime does, so that server and browser agree on the first render).
  const [typed, setTyped] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const when = typed ?? formatInstant(w.at ?? shownAt, client ? undefined : 'UTC');
  const [copied, setCopied] = useState<string | null>(null);
  const id = useId();
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
        className="flex flex-wrap items-center gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          const r = readTypedInstant(when);
          const now = Date.now();
          const error = !r.ok
            ? `“${when.trim()}” ${r.error}.`
            : futureAtError(r.iso, now)
              ? `${formatInstant(r.iso, undefined)} has not happened yet (it is now ${formatInstant(new Date(now).toISOString(), undefined)}).`
              : null;
          setProblem(error);
          if (!r.ok || error) return;
          setTyped(null);
          router.push(href(windowQuery({ ...w, at: r.iso })), { scroll: false });
        }}
      >
        <label className="flex items-center gap-2">
          <span>Show the state at</span>
          <input
            type="text"
            inputMode="text"
            spellCheck={false}
            autoComplete="off"
            value={when}
            aria-invalid={problem ? true : undefined}
            aria-describedby={`${id}-hint${problem ? ` ${id}-problem` : ''}`}
            onChange={(e) => {
              setTyped(e.target.value);
              setProblem(null);
            }}
            className="w-64 rounded border border-slate-300 bg-white px-2 py-1 font-mono text-xs tabular-nums dark:border-slate-700 dark:bg-slate-900"
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
        <span id={`${id}-hint`} className="sr-only">
          As {TYPED_EXAMPLE}, in your time zone, or followed by UTC or an offset such as +01:00.
        </span>
        {problem ? (
          <span id={`${id}-problem`} role="alert" className="basis-full text-red-700 dark:text-red-300">
            {problem}
          </span>
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
