import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { BUILTIN_TEMPLATES } from '../../src/profiles/templates';
import { FakeOpenAiApi, ResponsesReply, ResponsesRequest } from '../support/fake-openai-api';
import { sessionCalls } from '../support/session-calls';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
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
  let api: FakeOpenAiApi;
  const homes = new AgentHomes();
  const bin = tempDir('brainstem-codex-bin-');
  const cwd = tempDir('brainstem-cwd-');

  beforeAll(() => {
    symlinkSync(REAL_CODEX!, join(bin.path, 'codex'));
  });
  // The profile's own MCP server in the rule checks is this service's /mcp reached with no credential (the main
  // brain's tools), which takes BRAINSTEM_AUTH=off. Workers still send their own credential, and a wrong one is refused.
  const t = useTestApp({ BRAINSTEM_AUTH: 'off', BRAINSTEM_SANDBOX: 'required' }, { listen: true });
  // codex's own approval of an MCP tool a profile marks `ask` holds only with codex's own sandbox on, which is off
  // inside Brainstem's (docs/reference/runtimes.md): that rule is checked on an unsandboxed worker.
  const unsandboxed = useTestApp({ BRAINSTEM_AUTH: 'off', BRAINSTEM_SANDBOX: 'off' }, { listen: true });
  afterEach(async () => {
    homes.cleanUp();
    await api?.close();
  });
  afterAll(() => {
    bin.remove();
    cwd.remove();
  });

  const { call, turnsEnded, untilState } = sessionCalls(() => t);
  const plain = sessionCalls(() => unsandboxed);

  /** A codex session whose CODEX_HOME names the fake API as its model provider; strict: unknown config keys fail. */
  async function startCodex(body: object = {}, drops = 0, reply?: (n: number, request: ResponsesRequest) => ResponsesReply, on = call): Promise<string> {
    api = new FakeOpenAiApi(drops, reply);
    const home = homes.create('brainstem-codex-home-');
    const provider = `model_provider = "fake"\n[model_providers.fake]\nname = "fake"\nbase_url = "${await api.start()}"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n`;
    writeFileSync(join(home, 'config.toml'), provider);
    const env = { PATH: `${bin.path}:${process.env.PATH}`, CODEX_HOME: home, OPENAI_API_KEY: 'sk-fake' };
    const res = await on('POST', '', { cwd: cwd.path, runtime: 'codex', env, prompt: 'first', args: ['--strict-config', '--skip-git-repo-check'], ...body });
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

  it("given the model calls Brainstem's report_progress through codex's exec tool, then codex runs it without asking and the progress is recorded", async () => {
    // codex 0.169 offers MCP tools only as deferred nested tools of `exec`, which runs the model's JavaScript,
    // and refuses a call that would need approval, as every MCP tool does by default, in a headless run.
    const report = { status: 'working', message: 'halfway through the parser' };
    const call = `const r = await tools.mcp__brainstem__report_progress(${JSON.stringify(report)});\ntext(JSON.stringify(r));`;
    const id = await startCodex({}, 0, (n) => (n === 1 ? { exec: call } : { text: `reply ${n}` }));
    expect(await turnsEnded(id, 1)).toEqual(['reply 2']);
    const progress = (await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`)).filter((e) => e.type === 'session.progress').map((e) => e.data);
    expect(progress).toEqual([{ at: expect.any(Number), ...report }]);
    // The tool's answer, the session as the service sees it, went back to the model as the script's output.
    const output = (api.requests[1].input as Array<{ type: string; output?: Array<{ text: string }> }>).find((i) => i.type === 'custom_tool_call_output');
    expect(JSON.stringify(output?.output)).toContain(id);
  }, 120000);

  it("given a profile's rules on its own MCP server, then codex runs the allowed tools, refuses the one to ask about, and does not offer the denied one", async () => {
    // The profile's server is the service's own MCP endpoint without a session header: the main brain's tools.
    const profile = {
      name: 'Codex MCP rules',
      target_runtime: 'codex',
      tools: { mcp_servers: { other: { type: 'http', url: `${unsandboxed.url}/mcp` } } },
      permissions: { mode: 'default', allow: ['mcp__other'], ask: ['mcp__other__supervision_status'], deny: ['mcp__other__stop_session'] },
    };
    const created = await unsandboxed.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: profile });
    expect(created.json()).toMatchObject({ id: expect.any(String) });
    const script = [
      'const listed = await tools.mcp__other__list_sessions({});',
      'const asked = await tools.mcp__other__supervision_status({});',
      "text(JSON.stringify({ listed, asked, stop: typeof tools.mcp__other__stop_session, names: ALL_TOOLS.map((x) => x.name).filter((n) => n.startsWith('mcp__other')) }));",
    ].join('\n');
    const id = await startCodex({ profile_id: created.json().id }, 0, (n) => (n === 1 ? { exec: script } : { text: `reply ${n}` }), plain.call);
    expect(await plain.turnsEnded(id, 1)).toEqual(['reply 2']);
    const output = (api.requests[1].input as Array<{ type: string; output?: Array<{ text: string }> }>).find((i) => i.type === 'custom_tool_call_output');
    const result = JSON.parse(output!.output![1].text) as { listed: { isError?: boolean; content: Array<{ text: string }> }; asked: { isError?: boolean; content: Array<{ text: string }> }; stop: string; names: string[] };
    expect(result.listed.isError).toBeFalsy();
    expect(result.listed.content[0].text).toContain(id);
    expect(result.asked).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('requires approval') }] });
    expect(result.stop).toBe('undefined');
    expect(result.names).toContain('mcp__other__list_sessions');
    expect(result.names).not.toContain('mcp__other__stop_session');
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
