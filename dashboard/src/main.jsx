// The dashboard: a page per area, over the front-end's API routes.

import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { Link, Route, Router, Switch, useLocation } from "wouter-preact";
import { useHashLocation } from "wouter-preact/use-hash-location";
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { api, onUnauthorized, setToken, token } from "./api.js";
import { useGrants } from "./session.js";
import { usePoll } from "./hooks.js";
import { Guard } from "./ui.jsx";
import { Overview } from "./pages/overview.jsx";
import { Queue } from "./pages/queue.jsx";
import { Groups } from "./pages/groups.jsx";
import { DeadLetters } from "./pages/dlq.jsx";
import { Messages } from "./pages/messages.jsx";
import { TimersKv } from "./pages/timers.jsx";
import { Streams } from "./pages/streams.jsx";

const PAGES = [
  ["/", "Overview"],
  ["/groups", "Consumer groups"],
  ["/dlq", "Dead letters"],
  ["/messages", "Messages"],
  ["/timers", "Timers and KV"],
  ["/streams", "Streams"],
];

// The database's state, from /health: a banner when it is down.
function Health() {
  const poll = usePoll(() => api("/health"), "health");
  if (!poll.error) return null;
  const down = poll.error.status === 503 || poll.error.status === 0;
  return (
    <div class="banner" role="alert">
      {down ? `The database is down or unreachable: ${poll.error.message}` : poll.error.message}
    </div>
  );
}

// The token dialog: a modal <dialog>, so the page behind takes no focus;
// Escape or Cancel closes it.
function TokenForm({ onClose, reason }) {
  const [value, setValue] = useState("");
  const [problem, setProblem] = useState(null);
  const box = useRef(null);
  const field = useRef(null);
  useEffect(() => {
    const d = box.current;
    if (d && !d.open) d.showModal();
    if (field.current) field.current.focus();
  }, []);
  const submit = (e) => {
    e.preventDefault();
    const refused = setToken(value);
    if (refused) setProblem(refused);
    else onClose();
  };
  return (
    <dialog ref={box} class="dialog" aria-labelledby="token-title" onCancel={onClose}>
      <form onSubmit={submit}>
        <h2 id="token-title">Token</h2>
        <p>{reason || "This front-end checks bearer tokens. Paste yours; it is kept for this tab only."}</p>
        <label for="token-input">Bearer token (JWT)</label>
        <textarea id="token-input" ref={field} rows="4" value={value} onInput={(e) => setValue(e.currentTarget.value)} required />
        {problem && <p class="error">{problem}</p>}
        <div class="row">
          <button type="submit">Use this token</button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

function Who({ ask }) {
  const g = useGrants();
  if (!g.token) {
    return g.read ? null : (
      <span class="who">
        <button type="button" class="link" onClick={ask}>
          give a token
        </button>
      </span>
    );
  }
  return (
    <span class="who">
      {g.subject ? `${g.subject} · ` : ""}
      {g.roles && g.roles.length ? g.roles.join(", ") : "no role"}
      <button type="button" class="link" onClick={() => setToken(null)}>
        forget token
      </button>
      <button type="button" class="link" onClick={ask}>
        change token
      </button>
    </span>
  );
}

function NavLink({ href, label }) {
  const [location] = useLocation();
  const active = location === href || (href !== "/" && location.startsWith(`${href}/`));
  return (
    <Link href={href} class={active ? "active" : ""} aria-current={active ? "page" : undefined}>
      {label}
    </Link>
  );
}

// The page the URL names; one that fails to draw does not hold the others.
function Pages() {
  const [location] = useLocation();
  return (
    <Guard key={location}>
      <Switch>
        <Route path="/" component={Overview} />
        <Route path="/queues/:name">{(p) => <Queue name={decodeURIComponent(p.name)} />}</Route>
        <Route path="/groups" component={Groups} />
        <Route path="/groups/:group">{(p) => <Groups group={decodeURIComponent(p.group)} />}</Route>
        <Route path="/dlq" component={DeadLetters} />
        <Route path="/messages" component={Messages} />
        <Route path="/timers" component={TimersKv} />
        <Route path="/streams" component={Streams} />
        <Route>
          <p class="note">No such page.</p>
        </Route>
      </Switch>
    </Guard>
  );
}

function App() {
  const [asking, setAsking] = useState(null);
  // The token a 401 was answered to when the dialog was last closed: the
  // same refusal does not ask again, a new token or a first refusal does.
  const dismissed = useRef(undefined);
  useEffect(
    () =>
      onUnauthorized((e, sent) => {
        if (dismissed.current === (sent || null)) return;
        setAsking(sent ? `The token was refused: ${e.message}` : "This front-end needs a bearer token.");
      }),
    [],
  );
  return (
    <Router hook={useHashLocation}>
      <header>
        <Link href="/" class="brand">
          queen
        </Link>
        <nav aria-label="Pages">
          {PAGES.map(([href, label]) => (
            <NavLink href={href} label={label} />
          ))}
        </nav>
        <Who ask={() => setAsking("")} />
      </header>
      <Health />
      {asking !== null && (
        <TokenForm
          reason={asking}
          onClose={() => {
            dismissed.current = token();
            setAsking(null);
          }}
        />
      )}
      <main>
        <Pages />
      </main>
    </Router>
  );
}

render(<App />, document.getElementById("app"));
