import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { useTestApp } from './use-test-app';

describe('useTestApp', () => {
  const dirs: string[] = [];
  const closing: string[] = [];

  describe('given one app for the block', () => {
    let early = '';
    beforeAll(() => {
      try {
        void t.url;
      } catch (e) {
        early = (e as Error).message;
      }
    });
    const t = useTestApp({ BRAINSTEM_BODY_LIMIT_BYTES: '4096' }, { beforeClose: (app) => closing.push(`${app.config.server.body_limit_bytes} up: ${existsSync(app.config.journal.dir)}`) });

    it('then a hook before it started may not read it', () => {
      expect(early).toBe('useTestApp: read of url before the app started (read it in a test, or in a hook declared after useTestApp)');
    });

    it('then the tests get it started, with the env given', async () => {
      expect((await t.inject({ method: 'GET', url: '/api/v1/health' })).statusCode).toBe(200);
      expect(t.config.server.body_limit_bytes).toBe(4096);
      dirs.push(t.config.journal.dir);
    });

    it('then every test of the block shares it', () => {
      expect(t.config.journal.dir).toBe(dirs[0]);
    });
  });

  it('when the block ended, then beforeClose ran while the app was up, and the app closed with its temp dir removed', () => {
    expect(closing).toEqual(['4096 up: true']);
    expect(existsSync(dirname(dirs[0]))).toBe(false);
  });

  describe('given an app around each test', () => {
    const t = useTestApp(() => ({ BRAINSTEM_BODY_LIMIT_BYTES: String(5000 + dirs.length) }), { each: true });

    it('then the first test gets one', () => {
      expect(t.config.server.body_limit_bytes).toBe(5001);
      dirs.push(t.config.journal.dir);
    });

    it('then the next gets a fresh one, the previous closed and removed, the env read anew', () => {
      expect(t.config.server.body_limit_bytes).toBe(5002);
      expect(t.config.journal.dir).not.toBe(dirs[1]);
      expect(existsSync(dirname(dirs[1]))).toBe(false);
    });
  });
});
