import { Component, ComponentType, FunctionComponent, h } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * Long lists are rendered a chunk per task: a hundred cards or more in one task held the page for over 100 ms on the
 * 2-core machine (npm run bench:dashboard), and the page answers nothing meanwhile.
 */
export const CHUNK = 10;

/**
 * How many of `total` items to render now: a chunk at once, then one more chunk per task (a timer after each render)
 * until all are there. A list that shrinks starts over from its first chunk, so growing again is chunked too.
 */
export function useChunked(total: number, chunk = CHUNK): number {
  const [shown, setShown] = useState(chunk);
  useEffect(() => {
    if (total < shown - chunk) {
      setShown(Math.max(chunk, total));
      return;
    }
    if (shown >= total) return;
    const timer = setTimeout(() => setShown((n) => n + chunk), 0);
    return () => clearTimeout(timer);
  }, [shown, total, chunk]);
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
