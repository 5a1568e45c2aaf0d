// Calls to the front-end's API routes, with the tab's token when one is set.

const TOKEN_KEY = "queen.token";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

// Whether the front-end answered 401 to a call without a token: it checks
// tokens, and a tab without one may do nothing.
let required = false;
export function tokenRequired() {
  return required;
}

// Keeps `value` for the tab (null forgets it). A token is three base64url
// parts joined by dots; whitespace pasted with it is dropped. Answers an
// error message for anything else, and keeps nothing.
export function setToken(value) {
  const t = value ? value.replace(/\s+/g, "") : "";
  if (t && !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(t)) {
    return "that is not a JWT: three base64url parts joined by dots";
  }
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
  listeners.forEach((f) => f());
  return null;
}

const listeners = new Set();
export function onTokenChange(f) {
  listeners.add(f);
  return () => listeners.delete(f);
}

// Calls `path`; answers its JSON, or throws an ApiError naming the problem.
export async function api(path, { method = "GET", body, query } = {}) {
  const headers = {};
  const t = token();
  if (t) headers.authorization = `Bearer ${t}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let url = path;
  if (query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
    }
    const s = q.toString();
    if (s) url += `?${s}`;
  }
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, "unreachable", `the front-end did not answer (${e.message})`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const message = (data && (data.error || data.message)) || `${response.status} ${response.statusText}`;
    const error = new ApiError(response.status, (data && data.code) || "error", message);
    if (response.status === 401) {
      if (!t && !required) {
        required = true;
        listeners.forEach((f) => f());
      }
      unauthorized.forEach((f) => f(error, t));
    }
    throw error;
  }
  return data;
}

const unauthorized = new Set();
export function onUnauthorized(f) {
  unauthorized.add(f);
  return () => unauthorized.delete(f);
}

export const enc = encodeURIComponent;

// A name as one segment of a page's address (#/queues/NAME): the router
// decodes the address once (decodeURI, which turns %25 back into %) before
// the page decodes the segment, so % is encoded twice.
export const segment = (name) => enc(name).replace(/%25/g, "%2525");
