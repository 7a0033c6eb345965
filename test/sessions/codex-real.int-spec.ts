import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_TEMPLATES } from '../../src/profiles/templates';
import { FakeOpenAiApi } from '../support/fake-openai-api';
import { sessionCalls } from '../support/session-calls';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { AgentHomes } from '../support/workers';

/**
 * What the fake codex stands for, checked against a real `codex` talking to a fake Responses API: turns,
 * resume by thread id, a dropped model stream, and each built-in profile's -c overrides under --strict-config
 * (codex refuses a key it does not know). Opt-in (the binary is ~400 MB unpacked):
 * BRAINSTEM_REAL_CODEX=/path/to/codex npm test -- codex-real. The binary comes from npm:
 * `npm pack @openai/codex@<version>-linux-x64` holds it as package/vendor/x86_64-unknown-linux-musl/bin/codex.
 */
const REAL_CODEX = process.env.BRAINSTEM_REAL_CODEX;

(REAL_CODEX ? describe : describe.skip)('codex sessions with a real codex', () => {
  let t: TestApp;
  let api: FakeOpenAiApi;
  const homes = new AgentHomes();
  const bin = tempDir('brainstem-codex-bin-');
  const cwd = tempDir('brainstem-cwd-');

  beforeAll(async () => {
    symlinkSync(REAL_CODEX!, join(bin.path, 'codex'));
    t = await startTestApp({}, { listen: true });
  });
  afterEach(async () => {
    homes.cleanUp();
    await api?.close();
  });
  afterAll(async () => {
    await t.close();
    bin.remove();
    cwd.remove();
  });

  const { call, turnsEnded, untilState } = sessionCalls(() => t);

  /** A codex session whose CODEX_HOME names the fake API as its model provider; strict: unknown config keys fail. */
  async function startCodex(body: object = {}, drops = 0): Promise<string> {
    api = new FakeOpenAiApi(drops);
    const home = homes.create('brainstem-codex-home-');
    const provider = `model_provider = "fake"\n[model_providers.fake]\nname = "fake"\nbase_url = "${await api.start()}"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n`;
    writeFileSync(join(home, 'config.toml'), provider);
    const env = { PATH: `${bin.path}:${process.env.PATH}`, CODEX_HOME: home, OPENAI_API_KEY: 'sk-fake' };
    const res = await call('POST', '', { cwd: cwd.path, runtime: 'codex', env, prompt: 'first', args: ['--strict-config', '--skip-git-repo-check'], ...body });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  it("given a prompt, then codex reaches the service's MCP server as its session, the turn ends with the model answer, and the next message resumes the same thread", async () => {
    const id = await startCodex();
    expect(await turnsEnded(id, 1)).toEqual(['reply 1']);
    // codex reached the service's MCP server (the reserved server every profile carries) as this session: the
    // server's instructions, which name the session its identity header gave, are in the model's context.
    expect(JSON.stringify(api.requests[0].input)).toContain(`mcp__brainstem: You are Brainstem worker session ${id}`);
    expect((await call('POST', `/${id}/messages`, { text: 'second' })).status).toBe(200);
    expect(await turnsEnded(id, 2)).toEqual(['reply 1', 'reply 2']);
    // Resumed: the second request carries the first exchange.
    expect(JSON.stringify(api.requests[1].input)).toContain('reply 1');
    expect((await call('GET', `/${id}`)).body.state).toBe('pending_handling');
  }, 120000);

  it('given the model stream drops twice, then codex retries and the turn ends with the answer', async () => {
    const id = await startCodex({}, 2);
    expect(await turnsEnded(id, 1)).toEqual(['reply 3']);
  }, 120000);

  it('given an override codex does not know, then --strict-config refuses it before any thread: the check can fail (the control)', async () => {
    const id = await startCodex({ args: ['--strict-config', '--skip-git-repo-check', '-c', 'no_such_key=1'] });
    const ended = await untilState(id, 'exited');
    expect(ended.exit_code).not.toBe(0);
    expect(api.requests).toHaveLength(0);
  }, 120000);

  it.each(BUILTIN_TEMPLATES.map((x) => [x.id]))('given the %s template, then codex accepts its overrides under --strict-config and runs the turn', async (profileId) => {
    const id = await startCodex({ profile_id: profileId });
    expect(await turnsEnded(id, 1)).toEqual(['reply 1']);
    expect(JSON.stringify(api.requests[0])).toContain(JSON.stringify(BUILTIN_TEMPLATES.find((x) => x.id === profileId)!.doc.instructions.system_prompt!.split('\n')[0]).slice(1, -1));
  }, 120000);
});
