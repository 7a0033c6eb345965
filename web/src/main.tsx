import { render } from 'preact';
import { App } from './app';
import { registerWorker } from './push';
import './styles.css';

const root = document.getElementById('app');
if (root) render(<App />, root);
registerWorker();
