// The dashboard: a page per area, over the front-end's API routes.

import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Link, Route, Router, Switch } from "wouter-preact";
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

const PAGES = [
  ["/", "Overview"],
  ["/groups", "Consumer groups"],
  ["/dlq", "Dead letters"],
  ["/messages", "Messages"],
  ["/timers", "Timers and KV"],
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

function TokenForm({ onClose, reason }) {
  const [value, setValue] = useState("");
  const submit = (e) => {
    e.preventDefault();
    setToken(value.trim());
    onClose();
  };
  return (
    <div class="overlay">
      <form class="dialog" onSubmit={submit} aria-labelledby="token-title">
        <h2 id="token-title">Token</h2>
        <p>{reason || "This front-end checks bearer tokens. Paste yours; it is kept for this tab only."}</p>
        <label for="token-input">Bearer token (JWT)</label>
        <textarea id="token-input" rows="4" value={value} onInput={(e) => setValue(e.currentTarget.value)} required autofocus />
        <div class="row">
          <button type="submit">Use this token</button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}

function Who({ ask }) {
  const g = useGrants();
  if (!g.token) return null;
  return (
    <span class="who">
      {g.subject ? `${g.subject} · ` : ""}
      {g.roles && g.roles.length ? g.roles.join(", ") : "no role"}
      <button type="button" class="link" onClick={() => setToken(null)}>
        forget token
      </button>
      <button type="button" class="link" onClick={ask}>
        change
      </button>
    </span>
  );
}

function App() {
  const [asking, setAsking] = useState(null);
  const [, setRev] = useState(0);
  useEffect(
    () =>
      onUnauthorized((e) => {
        setAsking(token() ? `The token was refused: ${e.message}` : "This front-end needs a bearer token.");
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
            <Link href={href} class={(active) => (active ? "active" : "")}>
              {label}
            </Link>
          ))}
        </nav>
        <Who ask={() => setAsking("")} />
      </header>
      <Health />
      {asking !== null && (
        <TokenForm
          reason={asking}
          onClose={() => {
            setAsking(null);
            setRev((r) => r + 1);
          }}
        />
      )}
      <main>
        <Guard>
        <Switch>
          <Route path="/" component={Overview} />
          <Route path="/queues/:name">{(p) => <Queue name={decodeURIComponent(p.name)} />}</Route>
          <Route path="/groups" component={Groups} />
          <Route path="/groups/:group">{(p) => <Groups group={decodeURIComponent(p.group)} />}</Route>
          <Route path="/dlq" component={DeadLetters} />
          <Route path="/messages" component={Messages} />
          <Route path="/timers" component={TimersKv} />
          <Route>
            <p class="note">No such page.</p>
          </Route>
        </Switch>
        </Guard>
      </main>
    </Router>
  );
}

render(<App />, document.getElementById("app"));
