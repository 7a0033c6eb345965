import { spawn } from 'node:child_process';
import { RoundDriver } from '../../supervision/round-driver.port';
import { RoundView } from '../../supervision/supervision.service';

const MAX_OUTPUT = 64 * 1024;
const MAX_SUMMARY = 4000;

/**
 * Runs the configured command once per round, in its own process group, with the round's prompt on
 * stdin and BRAINSTEM_URL / BRAINSTEM_ROUND_ID (and the token) in its environment. The round ends when
 * it exits; the tail of its stdout is the summary. An aborted round kills the whole group.
 */
export function commandDriver(command: string, env: () => Record<string, string>): RoundDriver {
  return {
    name: 'command',
    deliver: (round: RoundView, signal: AbortSignal) =>
      new Promise((resolve, reject) => {
        const child = spawn('/bin/sh', ['-c', command], {
          detached: true,
          stdio: ['pipe', 'pipe', 'pipe'],
          env: { ...process.env, ...env(), BRAINSTEM_ROUND_ID: round.id },
        });
        let out = '';
        const keep = (chunk: Buffer) => {
          out = (out + chunk.toString('utf8')).slice(-MAX_OUTPUT);
        };
        child.stdout.on('data', keep);
        child.stderr.resume();
        child.stdin.on('error', () => undefined);
        child.stdin.end(round.prompt);
        const kill = () => {
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            // Already gone.
          }
        };
        signal.addEventListener('abort', kill, { once: true });
        child.on('error', (e) => {
          signal.removeEventListener('abort', kill);
          reject(e);
        });
        child.on('close', (code, sig) => {
          signal.removeEventListener('abort', kill);
          const tail = out.trim().slice(-MAX_SUMMARY);
          resolve({ summary: tail || (sig ? `brain command killed by ${sig}` : `brain command exited with code ${code}`) });
        });
      }),
  };
}
