import { Signal, useSignal } from '@preact/signals';
import { errorText } from './error-text';

/** A person's action on the page: `busy` while it runs, its failure shown as text in `error`. */
export function useAction(): { busy: Signal<boolean>; error: Signal<string | null>; attempt: (work: () => Promise<void>) => Promise<void> } {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const attempt = async (work: () => Promise<void>): Promise<void> => {
    busy.value = true;
    error.value = null;
    try {
      await work();
    } catch (e) {
      error.value = errorText(e);
    } finally {
      busy.value = false;
    }
  };
  return { busy, error, attempt };
}
