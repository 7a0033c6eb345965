import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, buildConfig } from './config.loader';

const yamlText = readFileSync(resolve(__dirname, '../../config/default.yaml'), 'utf8');
const build = (env: Record<string, string> = {}) => buildConfig({ yamlText, yamlName: 'default.yaml', env, argv: [], cwd: '/srv/app', home: '/home/me' });

function problemsOf(env: Record<string, string>): string[] {
  try {
    build(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe('the notifier settings', () => {
  it('given only the defaults file, notify every kind through Web Push, merging for 60 s, links lasting 15 min', () => {
    expect(build().notify).toEqual({
      public_url: null,
      kinds: [],
      quiet_hours: null,
      merge_window_s: 60,
      digest_after: 5,
      rate_per_minute: 10,
      action_ttl_s: 900,
      web_push: true,
      vapid_subject: 'mailto:brainstem@localhost',
      ntfy_url: null,
      ntfy_topic: null,
      ntfy_token: null,
      webhook_url: null,
      webhook_format: 'brainstem',
    });
  });

  it('takes a webhook, ntfy, quiet hours and kinds from the environment', () => {
    const n = build({
      BRAINSTEM_NOTIFY_WEBHOOK_URL: 'https://hooks.slack.example/T/B/x',
      BRAINSTEM_NOTIFY_WEBHOOK_FORMAT: 'slack',
      BRAINSTEM_NOTIFY_NTFY_URL: 'https://ntfy.sh',
      BRAINSTEM_NOTIFY_NTFY_TOPIC: 'my_brainstem-42',
      BRAINSTEM_NOTIFY_QUIET_HOURS: '22:30-07:00',
      BRAINSTEM_NOTIFY_KINDS: 'permission,confirmation',
      BRAINSTEM_PUBLIC_URL: 'https://brainstem.tail1234.ts.net',
    }).notify;
    expect(n).toMatchObject({ webhook_format: 'slack', ntfy_topic: 'my_brainstem-42', quiet_hours: '22:30-07:00', kinds: ['permission', 'confirmation'] });
  });

  it.each([
    [{ BRAINSTEM_NOTIFY_WEBHOOK_URL: 'hooks.example/x' }, 'BRAINSTEM_NOTIFY_WEBHOOK_URL: expected an http(s) URL, got "hooks.example/x"'],
    [{ BRAINSTEM_NOTIFY_WEBHOOK_URL: 'ftp://hooks.example/x' }, 'BRAINSTEM_NOTIFY_WEBHOOK_URL: expected an http(s) URL'],
    [{ BRAINSTEM_NOTIFY_NTFY_URL: 'https://ntfy.sh', BRAINSTEM_NOTIFY_NTFY_TOPIC: 'my topic' }, 'BRAINSTEM_NOTIFY_NTFY_TOPIC: expected 1 to 64 letters, digits, - or _, got "my topic"'],
    [{ BRAINSTEM_NOTIFY_NTFY_URL: 'https://ntfy.sh', BRAINSTEM_NOTIFY_NTFY_TOPIC: 'a/b' }, 'BRAINSTEM_NOTIFY_NTFY_TOPIC'],
    [{ BRAINSTEM_NOTIFY_NTFY_URL: 'https://ntfy.sh' }, 'BRAINSTEM_NOTIFY_NTFY_TOPIC: required with BRAINSTEM_NOTIFY_NTFY_URL'],
    [{ BRAINSTEM_NOTIFY_NTFY_TOPIC: 'x' }, 'BRAINSTEM_NOTIFY_NTFY_URL: required with BRAINSTEM_NOTIFY_NTFY_TOPIC'],
    [{ BRAINSTEM_NOTIFY_NTFY_URL: 'ntfy.sh', BRAINSTEM_NOTIFY_NTFY_TOPIC: 'x' }, 'BRAINSTEM_NOTIFY_NTFY_URL: expected an http(s) URL'],
    [{ BRAINSTEM_PUBLIC_URL: 'brainstem.local' }, 'BRAINSTEM_PUBLIC_URL: expected an http(s) URL'],
    [{ BRAINSTEM_NOTIFY_QUIET_HOURS: '22-7' }, 'BRAINSTEM_NOTIFY_QUIET_HOURS: expected HH:MM-HH:MM'],
    [{ BRAINSTEM_NOTIFY_QUIET_HOURS: '07:00-07:00' }, 'BRAINSTEM_NOTIFY_QUIET_HOURS: expected HH:MM-HH:MM (two different times)'],
    [{ BRAINSTEM_NOTIFY_KINDS: 'permission,spam' }, 'BRAINSTEM_NOTIFY_KINDS: unknown kind "spam"'],
    [{ BRAINSTEM_NOTIFY_VAPID_SUBJECT: 'me' }, 'BRAINSTEM_NOTIFY_VAPID_SUBJECT: expected a mailto: address or an https URL'],
    [{ BRAINSTEM_NOTIFY_WEBHOOK_FORMAT: 'teams' }, 'BRAINSTEM_NOTIFY_WEBHOOK_FORMAT: expected one of brainstem, slack'],
  ])('given %j, then the start stops with a message naming the variable', (env, message) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message);
  });
});
