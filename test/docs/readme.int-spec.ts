import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ERROR_STATUSES } from '../../src/app.errors';

const README = readFileSync(resolve(__dirname, '../../README.md'), 'utf8');

describe('the README as a guide', () => {
  it('lists every error code the service can answer, with its status', () => {
    const table = README.slice(README.indexOf('### Error codes'), README.indexOf('## Security model'));
    const missing = Object.entries(ERROR_STATUSES).filter(([code, status]) => {
      const row = table.split('\n').find((line) => line.includes(`\`${code}\``));
      return !row || !new RegExp(`${status}: [^;|]*\`${code}\``).test(row);
    });
    expect(missing).toEqual([]);
  });

  it('writes every route path in full', () => {
    const short = [...README.matchAll(/`(GET|POST|PATCH|PUT|DELETE) (\/[^`\s]*)/g)].map((m) => m[2]).filter((path) => !path.startsWith('/api/v1') && !path.startsWith('/mcp'));
    expect(short).toEqual([]);
  });
});
