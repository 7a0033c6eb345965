import { Component, ComponentType, FunctionComponent, h } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/**
 * Long lists are rendered a chunk a frame: a hundred cards or more in one task held the page for over 100 ms on the
 * 2-core machine (npm run bench:dashboard), and the page answers nothing meanwhile. The first chunk is CHUNK items; each
 * next one as many as rendered in BUDGET_MS the last time, so a slower (or busier) machine renders smaller chunks.
 */
export const CHUNK = 6;
const BUDGET_MS = 8;
const MAX_CHUNK = 25;

/**
 * How many of `total` items to render now: a chunk at once, then one more chunk a frame until all are there. Another
 * list (`from` changed: a new filter) starts over from its first chunk, and so does a list that shrank, when it grows.
 */
export function useChunked(total: number, from: unknown = null): number {
  const at = useRef({ from, shown: CHUNK, size: CHUNK, started: 0 });
  if (at.current.from !== from) at.current = { from, shown: CHUNK, size: at.current.size, started: 0 };
  at.current.shown = Math.min(at.current.shown, Math.max(CHUNK, total));
  const [, rendered] = useState(0);
  const shown = at.current.shown;
  // Runs in the task that rendered the chunk, once it is in the document: what the chunk took sizes the next one.
  useLayoutEffect(() => {
    const a = at.current;
    if (a.started === 0) return;
    const took = Math.max(performance.now() - a.started, 0.1);
    a.size = Math.max(1, Math.min(MAX_CHUNK, Math.floor((a.size * BUDGET_MS) / took)));
    a.started = 0;
  });
  useEffect(() => {
    if (shown >= total) return;
    // One chunk a frame, after the frame: effects may run before it when frames come late (a loaded machine), and
    // chunks then piled up into one layout (877 objects, 36 ms). A hidden tab renders no frame: it waits to be seen.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => {
        const a = at.current;
        a.started = performance.now();
        a.shown = shown + a.size;
        rendered((n) => n + 1);
      }, 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [shown, total, from]);
  return Math.min(shown, total);
}

const sameProps = (a: object, b: object): boolean => {
  const keys = Object.keys(a) as Array<keyof typeof a>;
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
};

/**
 * The component, rendered again only when one of its props changed: a chunk added to a list then renders its own rows,
 * not every row again (the store keeps an unchanged session the same object). Its signals still render it.
 */
export function memo<P extends object>(render: FunctionComponent<P>): ComponentType<P> {
  return class Memo extends Component<P> {
    override shouldComponentUpdate(next: P): boolean {
      return !sameProps(this.props, next);
    }
    override render(props: P) {
      return h(render, props);
    }
  };
}
