// Just enough of the Kubernetes JSONPath dialect for printer columns: `.a.b`, `.a[0]`,
// `.list[?(@.key=="value")].field`, and a dot inside a name escaped (`.metadata.labels.cluster\.x-k8s\.io/name`).

export function evalJsonPath(obj: unknown, path: string): unknown {
  const tokens =
    path.replace(/^\{|\}$/g, '').match(/\.(?:\\\.|[^.[\]\\])+|\[\?\(@\.[^=]+==["'][^"']*["']\)\]|\[\d+\]/g) ?? [];
  let cur: unknown[] = [obj];
  for (const t of tokens) {
    const next: unknown[] = [];
    for (const c of cur) {
      if (c === null || typeof c !== 'object') continue;
      if (t.startsWith('.')) {
        const v = (c as Record<string, unknown>)[t.slice(1).replace(/\\\./g, '.')];
        if (v !== undefined) next.push(v);
      } else if (t.startsWith('[?')) {
        const m = /^\[\?\(@\.([^=]+)==["']([^"']*)["']\)\]$/.exec(t);
        if (m && Array.isArray(c))
          for (const item of c) if ((item as Record<string, unknown>)?.[m[1] as string] === m[2]) next.push(item);
      } else if (Array.isArray(c)) {
        const v = c[Number(t.slice(1, -1))];
        if (v !== undefined) next.push(v);
      }
    }
    cur = next;
  }
  return cur.length === 0 ? undefined : cur.length === 1 ? cur[0] : cur;
}
