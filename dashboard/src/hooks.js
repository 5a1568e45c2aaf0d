// Polling that pauses while the tab is hidden.

import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { onTokenChange } from "./api.js";

export const POLL_MS = 5000;

// Runs `load` now, then every `period` ms while the tab is visible (and at
// once when it becomes visible again); answers { data, error, loaded,
// refresh }. `key` restarts it (a changed filter, another queue). One call
// is in flight at a time: a tick that comes while one is out is dropped,
// and a refresh asked meanwhile runs when it is back, so a slow database
// never piles calls up and every answer is shown.
export function usePoll(load, key, period = POLL_MS) {
  const [state, setState] = useState({ data: null, error: null, loaded: false });
  const loadRef = useRef(load);
  loadRef.current = load;
  // Bumped when the key changes or the component goes: an answer for an
  // older generation is dropped.
  const generation = useRef(0);
  const inFlight = useRef(false);
  const again = useRef(false);

  const run = useCallback(async () => {
    const mine = generation.current;
    inFlight.current = true;
    try {
      const data = await loadRef.current();
      if (mine === generation.current) setState({ data, error: null, loaded: true });
    } catch (error) {
      if (mine === generation.current) setState((s) => ({ data: s.data, error, loaded: true }));
    } finally {
      if (mine === generation.current) {
        inFlight.current = false;
        if (again.current) {
          again.current = false;
          run();
        }
      }
    }
  }, []);

  // Asked for (an action done, a token given): now, or as soon as the call
  // out is back.
  const refresh = useCallback(() => {
    if (inFlight.current) again.current = true;
    else run();
  }, [run]);

  useEffect(() => {
    generation.current++;
    inFlight.current = false;
    again.current = false;
    setState({ data: null, error: null, loaded: false });
    let timer = null;
    const tick = () => {
      if (document.visibilityState === "visible" && !inFlight.current) run();
    };
    const start = () => {
      clearInterval(timer);
      timer = setInterval(tick, period);
    };
    const visibility = () => {
      if (document.visibilityState === "visible") {
        refresh();
        start();
      } else {
        clearInterval(timer);
      }
    };
    run();
    start();
    document.addEventListener("visibilitychange", visibility);
    // A new token: ask again at once.
    const forget = onTokenChange(refresh);
    return () => {
      forget();
      clearInterval(timer);
      generation.current++;
      document.removeEventListener("visibilitychange", visibility);
    };
  }, [key, period]);

  return { ...state, refresh };
}
