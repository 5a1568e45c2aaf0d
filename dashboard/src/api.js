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

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
  listeners.forEach((f) => f());
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
    if (response.status === 401) unauthorized.forEach((f) => f(error));
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
