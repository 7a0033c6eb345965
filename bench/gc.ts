import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gcOnce = runInNewContext('gc') as () => void;

/** Collects until the heap settles, so resident memory is not read while V8 still returns the warm-up's pages. */
export async function gc(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    gcOnce();
    await new Promise((r) => setTimeout(r, 50));
  }
}
