import { signal, useSignalEffect } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { setToken, token } from './api';
import { AttentionView } from './attention';
import { ChatView } from './chat';
import { ClusterView } from './cluster';
import { ErrorAlert } from './error-alert';
import { JournalView } from './journal';
import { NotificationsView } from './notifications';
import { NotifyButton, useAttentionNotifications } from './notify';
import { ProfilesView } from './profiles';
import { SessionsView } from './sessions';
import { SupervisionView } from './supervision';
import { attention, lastError, start, streamStatus } from './store';
import { TokenPrompt } from './token-prompt';
import { UsageView } from './usage';

/** Hash routing: the service answers only for the files it has, so no catch-all hides a 404 under /api or /mcp. */
const ROUTES = {
  '#/': 'Needs attention',
  '#/sessions': 'Sessions',
  '#/supervision': 'Supervision',
  '#/chat': 'Main chat',
  '#/profiles': 'Profiles',
  '#/usage': 'Usage',
  '#/journal': 'Journal',
  '#/notifications': 'Notifications',
  '#/cluster': 'Cluster',
} as const;
type Route = keyof typeof ROUTES;
/** A route may carry a query after `?` (a notification links to `#/?session=cs_…`): the view reads it (cardParam). */
const routeOf = (hash: string): Route => {
  const path = hash.split('?')[0];
  return path in ROUTES ? (path as Route) : '#/';
};
const route = signal<Route>(routeOf(location.hash));
window.addEventListener('hashchange', () => (route.value = routeOf(location.hash)));

const STATUS_TEXT = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…', unauthorized: 'signed out' } as const;

/** j / k move the focus between the permission requests, wherever the focus is (but not while typing). */
function moveFocus(e: KeyboardEvent): void {
  if (e.key !== 'j' && e.key !== 'k') return;
  const target = e.target as HTMLElement | null;
  if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA')) return;
  const cards = [...document.querySelectorAll<HTMLElement>('.permission')];
  if (cards.length === 0) return;
  const at = cards.findIndex((c) => c === document.activeElement);
  const next = e.key === 'j' ? (at + 1) % cards.length : (at <= 0 ? cards.length : at) - 1;
  cards[next]?.focus();
  e.preventDefault();
}

/** Its own component: the queue's count changes often, and only the links show it (the views stay as they are). */
function Nav() {
  const waiting = attention.value.length;
  return (
    <nav aria-label="Views">
      {(Object.keys(ROUTES) as Route[]).map((r) => (
        <a key={r} href={r} aria-current={route.value === r ? 'page' : undefined}>
          {ROUTES[r]}
          {r === '#/' && waiting > 0 ? <span class="badge">{waiting}</span> : null}
        </a>
      ))}
    </nav>
  );
}

/** The stream's status and the last error, apart from the view: a change to them renders them alone. */
function TopBar() {
  return (
    <>
      <header class="top">
        <h1>Brainstem</h1>
        <span class={`stream ${streamStatus.value}`} role="status">
          {STATUS_TEXT[streamStatus.value]}
        </span>
        <NotifyButton />
        <button type="button" onClick={() => setToken(null)}>
          Forget token
        </button>
      </header>
      <ErrorAlert message={lastError.value}>
        <button type="button" onClick={() => (lastError.value = null)}>
          Dismiss
        </button>
      </ErrorAlert>
    </>
  );
}

function Dashboard() {
  useEffect(() => start(), []);
  useEffect(() => {
    document.addEventListener('keydown', moveFocus);
    return () => document.removeEventListener('keydown', moveFocus);
  }, []);
  useAttentionNotifications();
  useSignalEffect(() => {
    const n = attention.value.length;
    const title = n > 0 ? `(${n}) Brainstem` : 'Brainstem';
    // Set only when it changes: each set costs milliseconds, and the queue changes with every batch of events.
    if (document.title !== title) document.title = title;
  });
  return (
    <div class="shell">
      <TopBar />
      <Nav />
      <main>
        {route.value === '#/' ? <AttentionView /> : null}
        {route.value === '#/supervision' ? <SupervisionView /> : null}
        {route.value === '#/chat' ? <ChatView /> : null}
        {route.value === '#/sessions' ? <SessionsView /> : null}
        {route.value === '#/journal' ? <JournalView /> : null}
        {route.value === '#/profiles' ? <ProfilesView /> : null}
        {route.value === '#/notifications' ? <NotificationsView /> : null}
        {route.value === '#/usage' ? <UsageView /> : null}
        {route.value === '#/cluster' ? <ClusterView /> : null}
      </main>
    </div>
  );
}

export function App() {
  return token.value !== null ? <Dashboard /> : <TokenPrompt />;
}
