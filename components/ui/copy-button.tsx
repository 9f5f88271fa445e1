'use client';

import { useState } from 'react';

/** Copies `text` to the clipboard; says whether it did (a page over plain HTTP has no clipboard: select the text). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () => {
    const done = navigator.clipboard?.writeText(text);
    if (!done) return setState('failed');
    done.then(
      () => setState('copied'),
      () => setState('failed'),
    );
  };
  return (
    <button
      type="button"
      onClick={copy}
      aria-label={label}
      className="shrink-0 rounded border border-slate-300 px-1.5 py-0.5 text-xs hover:bg-slate-100 dark:border-slate-700 dark:hover:bg-slate-800"
    >
      <span aria-live="polite">{state === 'copied' ? 'Copied' : state === 'failed' ? 'Select to copy' : 'Copy'}</span>
    </button>
  );
}
