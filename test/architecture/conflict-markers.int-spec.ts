import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const TEXT = /\.(ts|tsx|js|json|md|yaml|yml|css|html|sh)$|^\.ci\/run$/;
// A line that is exactly a marker; a real file never needs one (markdown underlines are written with ---).
const MARKER = /^(<{7}|={7}|>{7})( |$)/m;

describe('the tracked sources', () => {
  it('hold no merge conflict markers', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter((f) => TEXT.test(f));
    expect(files.length).toBeGreaterThan(100);
    const marked = files.filter((f) => MARKER.test(readFileSync(join(root, f), 'utf8')));
    expect(marked).toEqual([]);
  });
});
