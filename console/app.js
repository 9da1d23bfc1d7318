import { api, session } from './api.js';
import { Board } from './board.js';
import { DuplicatesPage } from './duplicates.js';
import { Funnel } from './funnel.js';
import { language, t } from './i18n.js';
import { ImportsPage } from './imports.js';
import { PipelinesPage } from './pipelines-page.js';
import { recentMerges } from './recent-merges.js';
import { Records } from './records.js';
import { html, render, useEffect, useState } from './vendor/preact.js';
import { Webhooks } from './webhooks.js';

document.documentElement.lang = language === 'en' ? 'en' : 'pt-BR';
document.title = t('title');

/** The pages, each shown only to a token with the scope it reads with (or one of them). */
const PAGES = [
  { id: 'funnel', scope: 'leads:read', view: (props) => html`<${Funnel} ...${props} />` },
  { id: 'board', scope: 'leads:read', view: (props) => html`<${Board} ...${props} />` },
  { id: 'pipelines', scope: 'leads:read', view: (props) => html`<${PipelinesPage} ...${props} />` },
  { id: 'leads', scope: 'leads:read', view: (props) => html`<${Records} key="leads" resource="leads" ...${props} />` },
  {
    id: 'customers',
    scope: 'customers:read',
    view: (props) => html`<${Records} key="customers" resource="customers" ...${props} />`,
  },
  {
    id: 'duplicates',
    scope: ['leads:read', 'customers:read'],
    view: (props) => html`<${DuplicatesPage} ...${props} />`,
  },
  { id: 'imports', scope: ['leads:write', 'customers:write'], view: (props) => html`<${ImportsPage} ...${props} />` },
  { id: 'webhooks', scope: 'webhooks:read', view: (props) => html`<${Webhooks} ...${props} />` },
];

function currentPage() {
  return location.hash.replace(/^#\/?/, '') || 'funnel';
}

function SignIn({ onSignedIn }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const submit = async (event) => {
    event.preventDefault();
    setError('');
    try {
      const { body } = await api('/token', { token: token.trim() });
      session.token = token.trim();
      onSignedIn(body);
    } catch (failure) {
      setError(failure.body?.error ?? t('tokenRefused'));
    }
  };
  return html`
    <main class="sign-in">
      <h1><img src="/console/funil.svg" alt="" width="32" height="32" /> Funil</h1>
      <form onSubmit=${submit}>
        <label for="token">${t('tokenLabel')}</label>
        <input id="token" name="token" type="password" autocomplete="off" required value=${token}
          onInput=${(event) => setToken(event.currentTarget.value)} />
        <p class="help">${t('tokenHelp')}</p>
        ${error && html`<p class="error" role="alert">${error}</p>`}
        <button type="submit">${t('signIn')}</button>
      </form>
      <p><a href="/docs">${t('docs')}</a></p>
    </main>`;
}

function Shell({ who, onSignOut }) {
  const [page, setPage] = useState(currentPage());
  useEffect(() => {
    const follow = () => setPage(currentPage());
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  const allowed = PAGES.filter((candidate) => [candidate.scope].flat().some((scope) => who.scopes.includes(scope)));
  const shown = allowed.find((candidate) => candidate.id === page) ?? allowed[0];
  return html`
    <header class="top">
      <a class="brand" href="#/funnel"><img src="/console/funil.svg" alt="" width="24" height="24" /> Funil</a>
      <nav aria-label="Funil">
        ${allowed.map(
          (candidate) =>
            html`<a href=${`#/${candidate.id}`} aria-current=${candidate === shown ? 'page' : undefined}>${t(candidate.id)}</a>`,
        )}
        <a href="/docs">${t('docs')}</a>
      </nav>
      <button type="button" class="sign-out" onClick=${onSignOut}>${t('signOut')}</button>
    </header>
    <main id="page">${shown ? shown.view({ who }) : html`<p>${t('forbidden')}</p>`}</main>`;
}

/** Signing out forgets the token and what this session did with it (its merges). */
function forget() {
  session.token = null;
  recentMerges.clear();
}

function App() {
  const [who, setWho] = useState(undefined);
  const [checked, setChecked] = useState(false);
  useEffect(() => {
    if (!session.token) return setChecked(true);
    api('/token')
      .then(({ body }) => setWho(body))
      .catch(() => forget())
      .finally(() => setChecked(true));
  }, []);
  const signOut = () => {
    forget();
    setWho(undefined);
    location.hash = '';
  };
  if (!checked) return html`<p class="loading">${t('loading')}</p>`;
  return who ? html`<${Shell} who=${who} onSignOut=${signOut} />` : html`<${SignIn} onSignedIn=${setWho} />`;
}

render(html`<${App} />`, document.getElementById('app'));
