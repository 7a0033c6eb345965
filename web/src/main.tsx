import { render } from 'preact';
import { App } from './app';
import { registerWorker } from './push';
import './styles.css';

const root = document.getElementById('app');
// The page's first layout (its fonts found) and the app's first render made one task of 70–80 ms on a 2-core machine:
// the shell's "Loading…" is laid out in a frame of its own first, and the app renders in the task after it.
if (root) requestAnimationFrame(() => setTimeout(() => render(<App />, root), 0));
registerWorker();
