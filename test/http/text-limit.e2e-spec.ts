import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { MAX_TEXT_BYTES } from '../../src/common/text-limit';
import { useTestApp } from '../support/use-test-app';
import { WORKERS, WorkerReaper } from '../support/workers';

/** The text limit is stated once, in bytes: a REST body and a tool's arguments pass or fail it alike. */
describe('the text limit, over REST and through a tool', () => {
  const reaper = new WorkerReaper();
  const t = useTestApp({}, { beforeClose: () => reaper.killAll() });
  let id: string;
  beforeAll(async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'command', command: process.execPath, args: [resolve(WORKERS, 'quiet.js')], cwd: tmpdir() } });
    id = res.json().id;
    reaper.track(res.json().pid);
  });

  const rest = (text: string) => t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/messages`, payload: { text } });
  const tool = (text: string) =>
    t.rawInject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/send_to_session', payload: { session: id, text }, headers: t.auth('main_brain') });
  // Two bytes of UTF-8 per character: fewer characters than the limit, so only a byte count tells.
  const atLimit = 'é'.repeat(MAX_TEXT_BYTES / 2);
  const overLimit = `${atLimit}é`;

  it('given a text of exactly 64 KiB of UTF-8, then both accept it', async () => {
    expect((await rest(atLimit)).statusCode).toBe(200);
    expect((await tool(atLimit)).statusCode).toBe(200);
  });

  it('given one character more (still far fewer characters than bytes), then both refuse it with a 400 naming the field', async () => {
    for (const res of [await rest(overLimit), await tool(overLimit)]) {
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/text.*must be at most 65536 bytes \(64 KiB\)/) });
    }
  });
});
