import { Fragment } from 'react';
import { breakPieces } from '@/lib/format';

/**
 * Text that may break after `/` and `=` (<wbr>), so that a long condition name wraps at its parts instead of
 * mid-word; copying it gives the text unchanged.
 */
export function Breakable({ text }: { text: string }) {
  const pieces = breakPieces(text);
  return (
    <>
      {pieces.map((p, i) => (
        <Fragment key={i}>
          {i > 0 ? <wbr /> : null}
          {p}
        </Fragment>
      ))}
    </>
  );
}
