import { spawn } from 'node:child_process';
import { RoundDriver } from '../../supervision/round-driver.port';
import { RoundView } from '../../supervision/round.view';

const MAX_OUTPUT = 64 * 1024;
const MAX_SUMMARY = 4000;
const DEFAULT_GRACE_MS = 5000;

/**
 * Runs the configured command once per round, in its own process group, with the round's prompt on
 * stdin and `env()` (the caller's: the service's environment, BRAINSTEM_URL and the brain's own BRAINSTEM_TOKEN) and
 * BRAINSTEM_ROUND_ID as its environment. The round ends when
 * it exits; the tail of its stdout is the summary. A round that ends otherwise ends the whole group:
 * SIGTERM, then SIGKILL after `graceMs`. A brain that ended the round itself (complete_round) is still
 * waiting for that call's answer, so it gets `graceMs` to exit on its own before the SIGTERM.
 */
export function commandDriver(command: string, env: () => Record<string, string>, options: { graceMs?: number } = {}): RoundDriver {
  const grace = options.graceMs ?? DEFAULT_GRACE_MS;
  return {
    name: 'command',
    deliver: (round: RoundView, signal: AbortSignal) =>
      new Promise((resolve, reject) => {
        const child = spawn('/bin/sh', ['-c', command], {
          detached: true,
          stdio: ['pipe', 'pipe', 'pipe'],
          env: { ...env(), BRAINSTEM_ROUND_ID: round.id },
        });
        let out = '';
        const keep = (chunk: Buffer) => {
          out = (out + chunk.toString('utf8')).slice(-MAX_OUTPUT);
        };
        child.stdout.on('data', keep);
        child.stderr.resume();
        child.stdin.on('error', () => undefined);
        child.stdin.end(round.prompt);
        const timers: NodeJS.Timeout[] = [];
        const later = (ms: number, f: () => void) => timers.push(setTimeout(f, ms).unref());
        const signalGroup = (sig: NodeJS.Signals) => {
          try {
            process.kill(-child.pid!, sig);
          } catch {
            // Already gone.
          }
        };
        const terminate = () => {
          signalGroup('SIGTERM');
          later(grace, () => signalGroup('SIGKILL'));
        };
        const stop = () => (signal.reason === 'completed' ? later(grace, terminate) : terminate());
        signal.addEventListener('abort', stop, { once: true });
        const settle = () => {
          signal.removeEventListener('abort', stop);
          timers.forEach(clearTimeout);
        };
        child.on('error', (e) => {
          settle();
          reject(e);
        });
        child.on('close', (code, sig) => {
          settle();
          const tail = out.trim().slice(-MAX_SUMMARY);
          resolve({ summary: tail || (sig ? `brain command killed by ${sig}` : `brain command exited with code ${code}`) });
        });
      }),
  };
}
