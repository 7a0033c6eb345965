import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseBrainDriver } from './brain-runtime';

describe('chooseBrainDriver', () => {
  let bin: string;
  beforeEach(() => {
    bin = mkdtempSync(join(tmpdir(), 'brain-runtime-'));
  });
  afterEach(() => rmSync(bin, { recursive: true, force: true }));
  const install = (name: string) => {
    writeFileSync(join(bin, name), '#!/bin/sh\n');
    chmodSync(join(bin, name), 0o755);
  };

  it('given auto and codex alone on PATH, then the brain is hosted on codex', () => {
    install('codex');
    expect(chooseBrainDriver('auto', 'auto', bin, '/')).toEqual({ driver: 'agent', runtime: 'codex' });
  });

  it('given auto and claude and gemini on PATH, then claude-code is preferred', () => {
    install('gemini');
    install('claude');
    expect(chooseBrainDriver('auto', 'auto', bin, '/')).toEqual({ driver: 'agent', runtime: 'claude-code' });
  });

  it('given auto and no runtime on PATH, then rounds are streamed for a brain the user brings', () => {
    expect(chooseBrainDriver('auto', 'auto', bin, '/')).toEqual({ driver: 'stream' });
  });

  it('given driver agent and no runtime on PATH, then the start fails naming what is missing', () => {
    expect(() => chooseBrainDriver('agent', 'auto', bin, '/')).toThrow(/none of claude, codex, gemini, opencode is on PATH/);
  });

  it('given a named runtime that is not installed, then the start fails naming its executable', () => {
    install('codex');
    expect(() => chooseBrainDriver('auto', 'claude-code', bin, '/')).toThrow('BRAINSTEM_MAIN_BRAIN_RUNTIME=claude-code: the main brain\'s runtime is missing: claude is not on PATH');
  });

  it('given a driver of the user\'s own, then no runtime is looked for', () => {
    expect(chooseBrainDriver('webhook', 'claude-code', bin, '/')).toEqual({ driver: 'webhook' });
  });
});
