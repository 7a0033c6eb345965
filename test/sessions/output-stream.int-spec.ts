import { openSse } from '../support/sse';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { WorkerReaper } from '../support/workers';

/**
 * A worker that writes "é" (0xC3 0xA9) split across two writes: "start " and the first byte at the first line on its
 * stdin, the second byte and " end" at the second. Each write waits on the test, so each is a chunk of its own.
 */
const SPLIT_WRITER = `
const lines = require('node:readline').createInterface({ input: process.stdin });
let n = 0;
lines.on('line', () => {
  n += 1;
  if (n === 1) process.stdout.write(Buffer.concat([Buffer.from('start '), Buffer.from([0xc3])]));
  else process.stdout.write(Buffer.concat([Buffer.from([0xa9]), Buffer.from(' end\\n')]), () => process.exit(0));
});
`;

describe('a session output stream with a real worker', () => {
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-cwd-');
  const t = useTestApp({}, { listen: true, beforeClose: () => reaper.killAll() });
  afterAll(() => cwd.remove());

  it('Given a worker writing a UTF-8 character split across two writes, When the output is streamed, Then the character arrives whole', async () => {
    const started = await t.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { cwd: cwd.path, command: process.execPath, args: ['-e', SPLIT_WRITER] } });
    expect(started.statusCode).toBe(201);
    const { id, pid } = started.json() as { id: string; pid: number };
    reaper.track(pid);
    const sse = await openSse(`${t.url}/api/v1/coding-sessions/${id}/output/stream`, t.auth());
    try {
      expect(await sse.take(1)).toMatchObject([{ event: 'tail', data: JSON.stringify({ lines: [] }) }]);
      const send = async (text: string) => expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/messages`, payload: { text } })).statusCode).toBe(200);

      // The first write ends with the character's first byte: only the text before it is sent, nothing garbled.
      await send('one');
      expect(await sse.take(1)).toMatchObject([{ event: 'output', data: JSON.stringify({ text: 'start ' }) }]);
      await send('two');
      expect(await sse.take(1)).toMatchObject([{ event: 'output', data: JSON.stringify({ text: 'é end\n' }) }]);
    } finally {
      sse.close();
    }
  });
});
