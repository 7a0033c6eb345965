/**
 * Who reads the main chat and the rounds, pure: from what this node knows (the driver, the hosted brain, the supervisor
 * lease, the clients following the rounds stream here), whether a brain is connected, in words, and how to connect one
 * when none is (docs/guide/main-brain.md#who-reads-the-messages).
 */

/** The hosted brain as this node knows it: running here (it leads), or hosted by the lease holder. */
export interface HostedFacts {
  runtime: string;
  /** What `<exe> --version` of the runtime printed, as x.y.z; null until read, or unreadable. */
  version: string | null;
  /** Running on this node now (it holds the supervisor lease and started it). */
  running_here: boolean;
  /** The conversation's id, when it runs here and has one. */
  conversation_id: string | null;
  /** Parked at its model's limit, when it runs here: until when (ISO), and which limit; null otherwise. */
  parked?: { reason: 'usage_limit' | 'rate_limit'; resumes_at: string } | null;
}

export interface PresenceFacts {
  /** agent (hosted), stream, command or webhook. */
  driver: string;
  hosted: HostedFacts | null;
  /** This node, and the node that holds the supervisor lease (null: none known) and whether it is up. */
  node: string;
  lease_holder: string | null;
  lease_holder_up: boolean;
  /** Clients following GET …/rounds/stream on this node. */
  round_listeners: number;
}

export interface BrainPresence {
  /** Whether a brain reads the chat and the rounds now. */
  connected: boolean;
  driver: string;
  hosted: boolean;
  /** The hosted brain's runtime, its version, and its conversation (when it runs on this node); null otherwise. */
  runtime: string | null;
  version: string | null;
  conversation_id: string | null;
  /** The node the hosted brain runs on; null for a brain the user brings, or none running. */
  node: string | null;
  /** stream: the clients following the rounds stream on this node; null for other drivers. */
  listeners: number | null;
  /** Who reads the messages, in a sentence. */
  summary: string;
  /** When no brain is connected: how to connect one; null otherwise. */
  how_to_connect: string | null;
}

const ROUNDS_STREAM = 'GET /api/v1/session-os/main-brain/rounds/stream';
const HOST_ONE = 'or put claude, codex, gemini or opencode on the service\'s PATH and restart it (BRAINSTEM_MAIN_BRAIN_DRIVER=auto hosts the brain)';
/** What brains the user brings do with the chat: they read it in their rounds; a message wakes none of them. */
const READS_IN_ROUNDS = 'it reads the chat in its rounds (read_chat); a message does not start a round';

function hosted(f: PresenceFacts, h: HostedFacts): BrainPresence {
  const base = { driver: f.driver, hosted: true, runtime: h.runtime, version: h.version, listeners: null };
  const who = `${h.runtime}${h.version ? ` ${h.version}` : ''}`;
  if (h.running_here) {
    const conversation = h.conversation_id ? `, conversation ${h.conversation_id}` : ', no conversation yet';
    const paused = h.parked ? ` It is paused at its model's ${h.parked.reason.replace('_', ' ')} until ${h.parked.resumes_at.slice(11, 16)} UTC: rounds and messages wait, and the first round after it covers them.` : '';
    return { ...base, connected: true, conversation_id: h.conversation_id, node: f.node, summary: `The hosted brain reads the messages: ${who} on this node${conversation}.${paused}`, how_to_connect: null };
  }
  if (f.lease_holder !== null && f.lease_holder !== f.node && f.lease_holder_up) {
    return { ...base, connected: true, conversation_id: null, node: f.lease_holder, summary: `The hosted brain reads the messages: ${who} on node ${f.lease_holder}, which holds the supervisor lease.`, how_to_connect: null };
  }
  const why = f.lease_holder === f.node ? 'it is not running on this node, which holds the supervisor lease (its start failed, or the service is stopping)' : 'no node holds the supervisor lease now, and only its holder hosts the brain';
  return {
    ...base,
    connected: false,
    conversation_id: null,
    node: null,
    summary: `No brain is connected: the hosted brain (${who}) is not running: ${why}.`,
    how_to_connect: `The lease is taken within BRAINSTEM_NODE_LEASE_TTL_S of its holder going away; GET /api/v1/ready on each node says which holds it, and the service's log why the brain did not start.`,
  };
}

export function brainPresence(f: PresenceFacts): BrainPresence {
  if (f.hosted) return hosted(f, f.hosted);
  const base = { driver: f.driver, hosted: false, runtime: null, version: null, conversation_id: null, node: null };
  if (f.driver === 'command') {
    return { ...base, connected: true, listeners: null, summary: `A brain you bring reads the messages: the command BRAINSTEM_MAIN_BRAIN_COMMAND runs at each round; ${READS_IN_ROUNDS}.`, how_to_connect: null };
  }
  if (f.driver === 'webhook') {
    return { ...base, connected: true, listeners: null, summary: `A brain you bring reads the messages: each round is POSTed to BRAINSTEM_MAIN_BRAIN_WEBHOOK_URL; ${READS_IN_ROUNDS}.`, how_to_connect: null };
  }
  const n = f.round_listeners;
  if (n > 0) {
    return { ...base, connected: true, listeners: n, summary: `A brain you bring reads the messages: ${n} client${n === 1 ? '' : 's'} follow${n === 1 ? 's' : ''} the rounds stream on this node; ${READS_IN_ROUNDS}.`, how_to_connect: null };
  }
  return {
    ...base,
    connected: false,
    listeners: 0,
    summary: 'No brain is connected: rounds are published on the rounds stream, and no client follows it on this node.',
    how_to_connect: `Follow ${ROUNDS_STREAM} with the brain's token (npx brainstem token --brain), ${HOST_ONE}.`,
  };
}

/** The chat's notice for a message no brain will read now. */
export function noBrainNotice(p: BrainPresence): string {
  return `${p.summary} Nothing reads this message until a brain connects. ${p.how_to_connect ?? ''}`.trim();
}
