import { execFileSync } from 'node:child_process';
import { networkEntryProblem } from '../../src/profiles/profile-sandbox.schema';

/**
 * The profile's host grammar against srt's own: every entry a profile may hold, srt's config schema (the one the
 * sandbox is started with) accepts, so no session fails on a profile the API took. srt is ESM only, so its answers come
 * from a real node process that imports the installed package.
 */

const SRT_VERDICTS = `
import { NetworkConfigSchema } from '@anthropic-ai/sandbox-runtime';
let input = '';
for await (const chunk of process.stdin) input += chunk;
const ok = (allowedDomains, deniedDomains) => NetworkConfigSchema.safeParse({ allowedDomains, deniedDomains }).success;
process.stdout.write(JSON.stringify(JSON.parse(input).map((e) => ({ allow: ok([e], []), deny: ok([], [e]) }))));
`;

function srtVerdicts(entries: readonly string[]): Array<{ allow: boolean; deny: boolean }> {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', SRT_VERDICTS], { input: JSON.stringify(entries), cwd: __dirname });
  return JSON.parse(out.toString()) as Array<{ allow: boolean; deny: boolean }>;
}

function prng(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

const HANDWRITTEN = [
  'example.com', '*.example.com', '*.npmjs.org:443', 'localhost', 'localhost:3000', '127.0.0.1', '10.0.0.1:5432', '[::1]', '[::1]:443',
  '[2001:db8::1]:8443', '[::ffff:1.2.3.4]', '*', '*:22', '*.com', '*.', '*example.com', 'a.*.example.com', 'com', '.example.com',
  'example.com.', 'a..b', 'https://example.com', 'example.com/x', 'example.com:0', 'example.com:080', 'example.com:65536', '::1',
  '2001:db8::1:443', '[::1', '[::1]junk', '[::1]:0', '[example.com]', '[fe80::1%eth0]', 'exa mple.com', 'bücher.example', 'under_score.example',
  'EXAMPLE.COM', 'a.b:65535', 'a.b:', ':80', '', '*.*.example.com', 'x.example.com:443:443',
];

/** Host-like text from the characters that matter to either grammar. */
function generated(count: number): string[] {
  const random = prng(20261202);
  const pieces = ['a', 'b', 'x1', '-', '_', '.', '.', '*', '*.', ':', ':443', ':0', '[', ']', '::1', '%', ' ', 'é', '/', 'com', 'example', '1'];
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(random() * 7) }, () => pieces[Math.floor(random() * pieces.length)]).join(''));
}

describe("the profile's host grammar against srt's", () => {
  const entries = [...HANDWRITTEN, ...generated(4000)];
  const srt = srtVerdicts(entries);

  it('given hand-written and 4,000 generated entries, then each one the profile takes, srt takes, in allow and in deny', () => {
    const taken = entries.flatMap((e, i) => (['allow', 'deny'] as const).filter((list) => networkEntryProblem(e, list) === null).map((list) => ({ e, list, srt: srt[i][list] })));
    expect(taken.filter((t) => !t.srt)).toEqual([]);
    expect(taken.length).toBeGreaterThan(50);
  });

  it('given the entries srt takes and the profile does not, then each is one of the forms the profile is stricter on', () => {
    const stricter = entries.flatMap((e, i) =>
      (['allow', 'deny'] as const).flatMap((list) => {
        const problem = networkEntryProblem(e, list);
        return srt[i][list] && problem !== null ? [{ e, problem }] : [];
      }),
    );
    // srt checks little more than a dot and no `/` or `:`: `a..b`, `*.*.example.com`, `[x].y` or a space pass it.
    const known = ['only letters', 'empty label', 'only as a first label', 'IPv6', 'control characters', 'has a port'];
    expect(stricter.filter((s) => !known.some((k) => s.problem.includes(k)))).toEqual([]);
  });
});
