import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { KNOBS } from '../../src/config/config.schema';
import { ERROR_STATUSES } from '../../src/app.errors';
import { CONFIGURATION_PAGE, CONFIG_FILE_VARIABLE, readDefaultsYaml, withConfigTable } from './config-reference';
import { REPO_ROOT, anchorsOf, brokenBecause, docFiles, markdownLines, relativeLinks, slug } from './markdown';

const read = (path: string): string => readFileSync(path, 'utf8');
const page = (path: string): string => read(resolve(REPO_ROOT, path));
const where = (file: string, line: number): string => `${relative(REPO_ROOT, file)}:${line}`;
/** The README and docs/: the pages written for readers (bench/README.md is the benches' lab notebook, checked for links only). */
const guidePages = (): string[] => docFiles().filter((f) => f !== resolve(REPO_ROOT, 'bench/README.md'));

describe('the docs', () => {
  describe('links', () => {
    it('finds anchors as GitHub writes them, so a check against them means what it says', () => {
      // Given headings with code, punctuation, non-ASCII text and repeats; Then the anchors are GitHub's
      expect(slug('`npm run bench:cluster` events')).toBe('npm-run-benchcluster-events');
      expect(slug('Workflow runs and auto_supervise')).toBe('workflow-runs-and-auto_supervise');
      expect(slug('Failover: `npm run bench:failover [-- --kills 20 --ttl 6]`')).toBe('failover-npm-run-benchfailover------kills-20---ttl-6');
      expect(slug('Supervision, workflow runs and the main brain')).toBe('supervision-workflow-runs-and-the-main-brain');
      expect(slug('State 待处理 — a label')).toBe('state-待处理--a-label');
      expect([...anchorsOf('# A\n## Errors\n```\n## Not a heading\n```\n### Errors\n## Errors\n')]).toEqual(['a', 'errors', 'errors-1', 'errors-2']);
    });

    it('finds a broken link and a broken anchor (the check can fail)', () => {
      // Given a page (read as the text below) linking a missing file, a missing anchor, a good anchor and an external URL
      const file = resolve(REPO_ROOT, 'docs/README.md');
      const text = '# Top\n[a](missing.md) [b](#nowhere) [c](#top) [d](https://example.com) `[e](in-code.md)`\n```\n[f](fenced.md)\n```\n';
      const links = relativeLinks(file, text);
      // Then only the relative links outside code are read, and the two broken ones are named
      expect(links.map((l) => l.target)).toEqual(['missing.md', '#nowhere', '#top']);
      const reasons = links.map((l) => brokenBecause(l, () => text));
      expect(reasons[0]).toMatch(/docs\/missing\.md does not exist/);
      expect(reasons[1]).toMatch(/no heading with the anchor #nowhere/);
      expect(reasons[2]).toBeNull();
    });

    it('resolves every relative link and anchor in the README and docs/', () => {
      const files = docFiles();
      expect(files.length).toBeGreaterThan(20);
      const broken = files.flatMap((file) =>
        relativeLinks(file, read(file)).flatMap((link) => {
          const reason = brokenBecause(link);
          return reason ? [`${where(file, link.line)} ${link.target}: ${reason}`] : [];
        }),
      );
      expect(broken).toEqual([]);
    });

    it('reaches every page under docs/ from the README', () => {
      const reached = new Set<string>();
      const visit = (file: string): void => {
        if (reached.has(file) || !file.endsWith('.md')) return;
        reached.add(file);
        for (const link of relativeLinks(file, read(file))) {
          const path = link.target.split('#')[0];
          if (path !== '' && brokenBecause({ ...link, target: path }) === null) visit(resolve(file, '..', path));
        }
      };
      visit(resolve(REPO_ROOT, 'README.md'));
      const unreached = docFiles().filter((f) => !reached.has(f)).map((f) => relative(REPO_ROOT, f));
      expect(unreached).toEqual([]);
    });
  });

  describe('the README', () => {
    const readme = page('README.md');

    it('is a short guide: at most 300 lines', () => {
      expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    });

    it('shows the two set-up commands', () => {
      const commands = markdownLines(readme).filter((l) => l.inFence).map((l) => l.text.trim());
      expect(commands).toContain('npm install && npm start');
      expect(commands).toContain('npm test');
    });
  });

  it('wraps prose: no line outside code blocks and tables is longer than 200 characters', () => {
    const long = guidePages().flatMap((file) =>
        markdownLines(read(file))
          .filter((l) => !l.inFence && !l.text.trimStart().startsWith('|') && l.text.length > 200)
          .map((l) => `${where(file, l.line)} (${l.text.length} characters)`),
      );
    expect(long).toEqual([]);
  });

  describe('the configuration reference', () => {
    const reference = read(CONFIGURATION_PAGE);

    it('has a row for every BRAINSTEM_* variable of the config schema', () => {
      const variables = [...KNOBS.map((k) => k.env), CONFIG_FILE_VARIABLE];
      const missing = variables.filter((name) => !reference.split('\n').some((line) => line.startsWith(`| \`${name}\` |`)));
      expect(variables.length).toBeGreaterThan(30);
      expect(missing).toEqual([]);
    });

    it('holds the variables table as npm run docs:config writes it from the schema and config/default.yaml', () => {
      expect(reference).toBe(withConfigTable(reference, readDefaultsYaml()));
    });

    it('names every BRAINSTEM_* variable the docs mention', () => {
      const named = new Set(guidePages().flatMap((file) => [...read(file).matchAll(/\bBRAINSTEM_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0])));
      const unlisted = [...named].filter((name) => !reference.includes(`\`${name}\``));
      expect(unlisted).toEqual([]);
    });
  });

  describe('the errors reference', () => {
    const errors = page('docs/reference/errors.md');

    it('lists every error code the service can answer, with its status', () => {
      const start = errors.indexOf('\n## Error codes\n');
      expect(start).toBeGreaterThan(0);
      const table = errors.slice(start, errors.indexOf('\n## ', start + 1));
      const missing = Object.entries(ERROR_STATUSES).filter(([code, status]) => {
        const row = table.split('\n').find((line) => line.includes(`\`${code}\``));
        return !row || !new RegExp(`${status}: [^;|]*\`${code}\``).test(row);
      });
      expect(Object.keys(ERROR_STATUSES).length).toBeGreaterThan(50);
      expect(missing).toEqual([]);
    });
  });

  it('writes every route path in full, in the README and every page', () => {
    const short = guidePages().flatMap((file) =>
      [...read(file).matchAll(/`(GET|POST|PATCH|PUT|DELETE) (\/[^`\s]*)/g)]
        .map((m) => m[2])
        .filter((path) => !path.startsWith('/api/v1') && !path.startsWith('/mcp'))
        .map((path) => `${relative(REPO_ROOT, file)}: ${path}`),
    );
    expect(short).toEqual([]);
  });
});
