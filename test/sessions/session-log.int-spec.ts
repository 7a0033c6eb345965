import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SessionLog } from '../../src/sessions/session-log';
import { tempDir } from '../support/temp-dir';

describe('SessionLog on a real disk', () => {
  const dir = tempDir('brainstem-log-');
  afterAll(() => dir.remove());

  it('given its directory was removed, when output passes the cap, then the write reports the error once instead of throwing and later output lands in a new file', () => {
    const logs = join(dir.path, 'session-logs');
    const errors: string[] = [];
    const log = SessionLog.in(logs, 'cs_gone', 64, (e) => errors.push(e.message));
    log.write('first line\n');
    rmSync(logs, { recursive: true });

    expect(() => log.write('x'.repeat(60) + '\n')).not.toThrow();
    expect(() => log.write('y'.repeat(60) + '\n')).not.toThrow();
    expect(errors).toEqual([expect.stringContaining('ENOENT')]);

    log.write('after\n');
    expect(existsSync(join(logs, 'cs_gone.log'))).toBe(true);
    expect(readFileSync(join(logs, 'cs_gone.log'), 'utf8')).toContain('after\n');
    log.close();
  });
});
