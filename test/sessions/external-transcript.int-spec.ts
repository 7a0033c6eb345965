import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TRANSCRIPT_TAIL_BYTES, projectsDir, transcriptTail, transcriptUnder } from '../../src/sessions/external-transcript';
import { tempDir } from '../support/temp-dir';

/** An external session's output: its claude transcript, read under ~/.claude/projects only, its end only. */
describe("an external session's transcript, on real files", () => {
  const home = tempDir('brainstem-transcript-home-');
  const outside = tempDir('brainstem-transcript-outside-');
  afterAll(() => {
    home.remove();
    outside.remove();
  });

  const record = (type: 'user' | 'assistant', content: unknown) => JSON.stringify({ type, message: { role: type, content } });

  it('Given a transcript, Then its prompts, words, tool calls and results are its lines; bookkeeping records are skipped', () => {
    const dir = join(projectsDir(home.path), '-repo');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 's1.jsonl');
    writeFileSync(
      path,
      [
        JSON.stringify({ type: 'attachment', attachment: { type: 'environment' } }),
        record('user', 'fix it\nplease'),
        record('assistant', [{ type: 'text', text: 'Sure.' }, { type: 'tool_use', name: 'Bash', input: { command: 'ls' } }]),
        record('user', [{ type: 'tool_result', content: 'a.ts' }]),
        'not json',
      ].join('\n') + '\n',
    );
    expect(transcriptUnder(home.path, path)).toBe(path);
    expect(transcriptTail(home.path, path, 100)).toEqual(['user: fix it', 'please', 'claude: Sure.', 'claude uses Bash: {"command":"ls"}', 'tool result: a.ts']);
    expect(transcriptTail(home.path, path, 2)).toEqual(['claude uses Bash: {"command":"ls"}', 'tool result: a.ts']);
  });

  it("Given a transcript larger than the bound, Then only its end is read, the record cut at the bound's start dropped", () => {
    const path = join(projectsDir(home.path), '-repo', 'big.jsonl');
    const filler = record('assistant', [{ type: 'text', text: 'x'.repeat(1000) }]);
    const lines = [record('user', 'the first prompt'), ...Array.from({ length: Math.ceil((TRANSCRIPT_TAIL_BYTES * 1.5) / filler.length) }, () => filler), record('user', 'the last prompt')];
    writeFileSync(path, lines.join('\n') + '\n');
    const tail = transcriptTail(home.path, path, 100_000);
    expect(tail[tail.length - 1]).toBe('user: the last prompt');
    expect(tail).not.toContain('user: the first prompt');
    expect(tail.every((l) => l === 'user: the last prompt' || l.startsWith('claude: x'))).toBe(true);
  });

  it('Given a transcript swapped for a symlink out of ~/.claude/projects after it was bound, Then nothing is read from it', () => {
    const path = join(projectsDir(home.path), '-repo', 's2.jsonl');
    writeFileSync(path, record('user', 'mine') + '\n');
    expect(transcriptTail(home.path, path, 10)).toEqual(['user: mine']);
    const secret = join(outside.path, 'secret.jsonl');
    writeFileSync(secret, record('user', 'the secret') + '\n');
    renameSync(path, `${path}.old`);
    symlinkSync(secret, path);
    expect(transcriptTail(home.path, path, 10)).toEqual([]);
    expect(transcriptUnder(home.path, path)).toBeNull();
    expect(transcriptUnder(home.path, join(projectsDir(home.path), '..', 'settings.json'))).toBeNull();
    expect(transcriptTail(home.path, null, 10)).toEqual([]);
  });
});
