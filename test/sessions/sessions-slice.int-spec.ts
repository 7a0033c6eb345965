import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GitCli } from '../../src/worktrees/git-cli';
import { CliWorktreeGit } from '../../src/worktrees/worktree-git';
import { DomainError } from '../../src/common/domain-error';
import { CommandStream, handleCommand } from '../../src/journal/command-handler';
import { EventJournal } from '../../src/journal/event-journal';
import { MemoryStorage } from '../../src/journal/memory.storage';
import { SessionCommands } from '../../src/sessions/session.commands';
import { systemClock, randomIds } from '../../src/sessions/session.ports';
import { SessionRegistry } from '../../src/sessions/session.registry';
import { toStatus } from '../../src/sessions/session.status';
import { SessionsSlice, sessionsSlice } from '../../src/sessions/sessions.slice';
import { SessionDirectory } from '../../src/supervision/session-directory.port';
import { ClaudeCodeRuntime } from '../../src/sessions/runtimes/claude-code.runtime';
import { CommandRuntime } from '../../src/sessions/runtimes/command.runtime';
import { NodeProcessRunner } from '../../src/sessions/runtimes/process-runner';
import { RuntimeCatalog } from '../../src/sessions/runtimes/runtime-catalog';
import { MemoryProfile, MemorySessionEnvStore, MemorySessionProfiles, MemorySessionWorkspace } from '../support/memory-session-ports';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WORKERS, WorkerReaper, isAlive } from '../support/workers';

const WORKER_TOKEN = (id: string) => `worker-token-${id}`;

/**
 * The way back for workers: what REST would take of their signals, and nothing else, straight into the slice's
 * service. The worker proves itself with the token its endpoint gave it.
 */
function signalsEndpoint(slice: () => SessionsSlice): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const route = /^\/api\/v1\/coding-sessions\/([^/]+)\/signals$/.exec(req.url ?? '');
    const answer = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method !== 'POST' || !route) return answer(404, {});
    if (req.headers.authorization !== `Bearer ${WORKER_TOKEN(route[1])}`) return answer(401, {});
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      slice()
        .service.signal(route[1], JSON.parse(body))
        .then(
          (status) => answer(200, status),
          (e: unknown) => answer(409, { code: e instanceof DomainError ? e.code : 'internal_error' }),
        );
    });
  });
}

describe('the sessions slice without the app: a real journal, real worker processes, in-memory ports', () => {
  const dir = tempDir('brainstem-slice-');
  const reaper = new WorkerReaper();
  let storage: MemoryStorage;
  let journal: EventJournal;
  let server: Server;
  let workspace: MemorySessionWorkspace;
  let envs: MemorySessionEnvStore;
  let profiles: MemorySessionProfiles;
  let slice: SessionsSlice;

  async function start(options: { max_sessions?: number; profiles?: Record<string, MemoryProfile> } = {}): Promise<SessionsSlice> {
    workspace = new MemorySessionWorkspace(new Set([dir.path]));
    envs = new MemorySessionEnvStore();
    profiles = new MemorySessionProfiles(new Map(Object.entries({ default: { doc: { permissions: { mode: 'default', allow: [], deny: ['Bash(rm *)'], ask: [] } } }, ...options.profiles })));
    const runner = new NodeProcessRunner();
    const port = (server.address() as AddressInfo).port;
    slice = sessionsSlice({
      journal,
      runtimes: new RuntimeCatalog([new CommandRuntime(runner), new ClaudeCodeRuntime(runner)]),
      runner,
      profiles,
      workspace,
      envs,
      host: { env: { PATH: `${FAKE_BIN}:${process.env.PATH}` }, home: '/home/slice', cwd: '/' },
      endpoint: { url: () => `http://127.0.0.1:${port}`, token: WORKER_TOKEN },
      clock: systemClock,
      ids: randomIds,
      logsDir: join(dir.path, 'logs'),
      max_sessions: options.max_sessions ?? 10,
      git: new CliWorktreeGit(new GitCli(process.env)),
      worktrees_dir: join(dir.path, 'worktrees'),
    });
    await slice.service.onApplicationBootstrap();
    return slice;
  }

  beforeEach(async () => {
    storage = new MemoryStorage();
    journal = await EventJournal.open(storage);
    server = signalsEndpoint(() => slice);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });

  afterEach(async () => {
    reaper.killAll();
    slice.service.onApplicationShutdown();
    await slice.service.onModuleDestroy();
    await new Promise((r) => server.close(r));
    await journal.close();
  });

  afterAll(() => dir.remove());

  const stream = async (name: string) => (await journal.readStream(name)).map((e) => e.type);

  it('given a command worker, when it is created with a prompt, signals, is read and stopped, then each step is decided, journaled and acted on', async () => {
    const { service } = await start();
    const created = await service.create({ cwd: dir.path, command: process.execPath, args: [join(WORKERS, 'node-worker.js')], prompt: 'hello', env: { MODE: 'fast' } });
    reaper.track(created.pid);
    expect(created).toMatchObject({ alias: 'w1', state: 'working', runtime: 'command', profile_id: 'default', cwd: dir.path });
    // The alias and the creation are one append; the prompt went with the start.
    expect(await stream('sessions')).toEqual(['session.alias_assigned']);
    expect((await stream(`session-${created.id}`)).slice(0, 4)).toEqual(['session.created', 'session.started', 'session.state_changed', 'session.message_dispatched']);
    expect(envs.values.get(created.id)).toEqual({ MODE: 'fast' });

    // The worker got the prompt on stdin, and reported through its endpoint with its own token.
    await waitFor(async () => (await service.output(created.id)).lines.includes('got: hello'), { what: 'the worker to echo the prompt' });
    await waitFor(() => service.status('w1').last_progress?.message === 'did hello', { what: "the worker's progress signal" });

    const asked = await service.signal(created.id, { type: 'ask_human', question: 'ship it?' });
    expect(asked).toMatchObject({ state: 'pending_decision', pending: { kind: 'question', question: 'ship it?' } });
    const answered = await service.dispatch('w1', 'yes');
    expect(answered.state).toBe('working');
    await waitFor(async () => (await service.output(created.id)).lines.includes('got: yes'), { what: 'the worker to echo the answer' });

    const stopped = await service.stop(created.id, 2000);
    expect(stopped).toMatchObject({ state: 'exited', exit_reason: 'stopped' });
    await waitFor(() => !isAlive(created.pid!), { what: 'the worker to be gone' });
    // Its env values leave with it.
    expect(envs.values.has(created.id)).toBe(false);

    // Replayed by a registry of its own, the journal folds to the very state the slice holds.
    const replayed = new SessionRegistry(journal, envs);
    await replayed.load();
    expect(toStatus(replayed.get(created.id))).toEqual(toStatus(slice.registry.get(created.id)));
    await replayed.close();
  });

  it('given requests their facts refuse, then nothing is written for them: no session, no alias, no files', async () => {
    const { service } = await start({ max_sessions: 1 });
    await expect(service.create({ cwd: join(dir.path, 'not-there'), command: process.execPath })).rejects.toMatchObject({ code: 'cwd_not_a_directory' });
    await expect(service.create({ cwd: 'relative', command: process.execPath })).rejects.toMatchObject({ code: 'cwd_not_absolute' });
    await expect(service.create({ cwd: dir.path, command: 'no-such-executable-anywhere' })).rejects.toMatchObject({ code: 'command_not_executable' });
    expect(journal.head().seq).toBe(0);

    const first = await service.create({ cwd: dir.path, command: process.execPath, args: [join(WORKERS, 'quiet.js')] });
    reaper.track(first.pid);
    await expect(service.create({ cwd: dir.path, command: process.execPath, args: [join(WORKERS, 'quiet.js')], env: { A: '1' } })).rejects.toMatchObject({
      code: 'max_sessions_reached',
    });
    expect(await stream('sessions')).toEqual(['session.alias_assigned']);
    expect(service.list().sessions.map((s) => s.alias)).toEqual(['w1']);
    expect(envs.values.size).toBe(0);
    await service.stop(first.id, 0);
  });

  it("given a claude-code profile, then its files go to the session's directory in the workspace and the flags pointing there are journaled; with errors, then nothing", async () => {
    const settings = { path: '.claude/settings.json', content: '{"agent":"coder","permissions":{"deny":["Bash(rm *)"]}}', merge: 'json' as const };
    const { service } = await start({
      profiles: {
        coder: { doc: { runtime: 'claude-code' }, emitted: [settings] },
        broken: { doc: { runtime: 'claude-code' }, emitted: [settings], errors: [{ path: 'skills[0]', message: 'skill review is missing' }] },
      },
    });
    const s = await service.create({ cwd: dir.path, profile_id: 'coder' });
    reaper.track(s.pid);
    const written = workspace.configs.get(s.id);
    expect(written?.map((f) => f.path)).toEqual(['.claude/settings.json']);
    // The agent travels by flags, not in the session's settings.
    expect(JSON.parse(written![0].content)).toEqual({ permissions: { deny: ['Bash(rm *)'] } });
    const [created] = await journal.readStream(`session-${s.id}`);
    expect(created.data).toMatchObject({ runtime: 'claude-code', profile_args: expect.arrayContaining(['--settings', `/memory/session-config/${s.id}/.claude/settings.json`]) });

    await expect(service.create({ cwd: dir.path, profile_id: 'broken' })).rejects.toMatchObject({ code: 'profile_has_errors', details: { errors: [{ path: 'skills[0]' }] } });
    expect(workspace.configs.size).toBe(1);
    await service.stop(s.id, 0);
  });

  it("given another stream's command that excludes a session, then the session's exclusion is appended in the same batch at its version and adopted; unchanged, then no write", async () => {
    const { service } = await start();
    const s = await service.create({ cwd: dir.path, command: process.execPath, args: [join(WORKERS, 'quiet.js')] });
    reaper.track(s.pid);
    // Supervision's port names exclusionWrite with its own change; the directory has it already.
    const directory = service.directory() as SessionDirectory & Pick<SessionCommands, 'exclusionWrite'>;
    let version = 0;
    const scope: CommandStream<null> = { name: 'scope-test', current: () => ({ state: null, version }), adopt: (_s, v) => (version = v) };
    await handleCommand(journal, scope, () => ({ events: [{ type: 'scope.set', data: {} }] }), (x) => x, {
      meta: { actor: 'supervision' },
      alongside: () => [directory.exclusionWrite(s.id, true, 'supervision')!],
    });
    expect(service.status(s.id).excluded).toBe(true);
    const all = await journal.readAll();
    const batch = all.slice(-2).map((e) => [e.stream, e.type, e.meta.actor]);
    expect(batch).toEqual([
      ['scope-test', 'scope.set', 'supervision'],
      [`session-${s.id}`, 'session.exclusion_changed', 'supervision'],
    ]);
    expect(slice.registry.get(s.id).version).toBe(all[all.length - 1].version);
    expect(directory.exclusionWrite(s.id, true, 'supervision')).toBeNull();
    expect(directory.exclusionWrite('cs_unknown', true, 'supervision')).toBeNull();
    await service.stop(s.id, 0);
  });
});
