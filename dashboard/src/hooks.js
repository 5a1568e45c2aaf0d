// Polling that pauses while the tab is hidden.

import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { onTokenChange } from "./api.js";

export const POLL_MS = 5000;

// Runs `load` now, then every `period` ms while the tab is visible (and at
// once when it becomes visible again); answers { data, error, refresh }.
// `key` restarts it (a changed filter, another queue).
export function usePoll(load, key, period = POLL_MS) {
  const [state, setState] = useState({ data: null, error: null, loaded: false });
  const loadRef = useRef(load);
  loadRef.current = load;
  const generation = useRef(0);

  const refresh = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const data = await loadRef.current();
      if (mine === generation.current) setState({ data, error: null, loaded: true });
    } catch (error) {
      if (mine === generation.current) setState((s) => ({ data: s.data, error, loaded: true }));
    }
  }, []);

  useEffect(() => {
    setState({ data: null, error: null, loaded: false });
    let timer = null;
    const tick = () => {
      if (document.visibilityState === "visible") refresh();
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
    refresh();
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
