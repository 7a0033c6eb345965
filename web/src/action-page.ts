/**
 * The page an action link opens in a browser (a chat's button): it says what the link would do and acts only when
 * asked, so a link preview that fetches the page does nothing. The capability is the URL's fragment, which no server
 * and no log sees; it is this page's only credential. Everything is shown with textContent.
 */

// A module, so its names stay its own.
export {};

interface ActionView {
  action: string;
  label: string;
  target: { kind: 'permission'; session_id: string; request_id: string } | { kind: 'confirmation'; confirmation_id: string };
  session: { alias: string; title: string; runtime: string } | null;
  expires_at: string;
  status: 'usable' | 'used' | 'expired' | 'stale';
}

const STATUS_TEXT: Record<Exclude<ActionView['status'], 'usable'>, string> = {
  used: 'This link was used already: it works once.',
  expired: 'This link has expired.',
  stale: 'What this link answers no longer waits: it was answered, or something else waits now.',
};

const capability = decodeURIComponent(location.hash.slice(1));
const url = `/api/v1/notifications/actions/${encodeURIComponent(capability)}`;
const what = document.getElementById('what') as HTMLElement;
const button = document.getElementById('act') as HTMLButtonElement;
const result = document.getElementById('result') as HTMLElement;

async function messageOf(res: Response): Promise<string> {
  const body = (await res.json().catch(() => null)) as { message?: unknown } | null;
  return typeof body?.message === 'string' ? body.message : `The service answered ${res.status}.`;
}

function describe(v: ActionView): string {
  if (v.target.kind === 'confirmation') return `${v.label} the main brain's request ${v.target.confirmation_id}?`;
  const who = v.session ? `${v.session.alias} (${v.session.title} · ${v.session.runtime})` : v.target.session_id;
  return `${v.label} the permission request ${v.target.request_id} of session ${who}?`;
}

async function load(): Promise<void> {
  if (capability === '') {
    what.textContent = 'This link holds no action.';
    return;
  }
  const res = await fetch(url);
  if (!res.ok) {
    what.textContent = await messageOf(res);
    return;
  }
  const view = (await res.json()) as ActionView;
  what.textContent = describe(view);
  if (view.status !== 'usable') {
    result.textContent = STATUS_TEXT[view.status];
    return;
  }
  button.textContent = view.label;
  button.hidden = false;
  button.addEventListener('click', () => void use(view));
}

async function use(view: ActionView): Promise<void> {
  button.disabled = true;
  const res = await fetch(url, { method: 'POST' });
  result.textContent = res.ok ? `${view.label}: done.` : await messageOf(res);
  button.hidden = true;
}

load().catch((e: unknown) => {
  what.textContent = `The service could not be reached: ${e instanceof Error ? e.message : String(e)}`;
});
