import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './dependency-graph';

/**
 * bin/brainstem.js loads src/cli/claude-hook.ts alone, compiled on its own when the build is older than it: claude runs
 * the hook on every event, so it must start fast. That holds only while it imports nothing but Node's own modules.
 */
describe('the claude hook command stands alone', () => {
  it("imports only Node's own modules (node:…), nothing of Brainstem's or of a package", () => {
    const source = readFileSync(join(ROOT, 'src', 'cli', 'claude-hook.ts'), 'utf8');
    const specifiers = [...source.matchAll(/(?:from\s+|require\()\s*'([^']+)'/g)].map((m) => m[1]);
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((s) => !s.startsWith('node:'))).toEqual([]);
  });
});
