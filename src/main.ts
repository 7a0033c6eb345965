import 'reflect-metadata';
import { unsupportedPlatform } from './sessions/runtimes/process-runner';

// Checked before the service is even loaded: on a platform where workers cannot be tracked nothing is read, created
// or opened.
const unsupported = unsupportedPlatform(process.platform);
if (unsupported) {
  process.stderr.write(`brainstem: ${unsupported}\n`);
  process.exitCode = 1;
} else {
  import('./bootstrap').then(
    ({ bootstrap }) => bootstrap(),
    (e: unknown) => {
      process.stderr.write(`brainstem: failed to load: ${(e as Error)?.stack ?? String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
