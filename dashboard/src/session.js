// What the tab's token lets the user do, read from its role claims as the
// front-end reads them (`role`, or several in `roles`). Buttons that change
// state show only for a token that may use them; the front-end checks the
// token again on every call, whatever the page shows.

import { useEffect, useState } from "preact/hooks";
import { jwtDecode } from "jwt-decode";
import { onTokenChange, token, tokenRequired } from "./api.js";

export function grants(t = token()) {
  // No token: authentication is off, or the token is not given yet. The
  // first call tells which: a 401 means nothing may be done without one.
  if (!t) {
    const open = !tokenRequired();
    return { token: false, read: open, write: open, admin: open };
  }
  let claims = {};
  try {
    claims = jwtDecode(t);
  } catch {
    return { token: true, read: false, write: false, admin: false, bad: true };
  }
  const roles = [claims.role, ...(Array.isArray(claims.roles) ? claims.roles : [])].filter((r) => typeof r === "string");
  const admin = roles.includes("admin");
  const readWrite = admin || roles.includes("read-write");
  return {
    token: true,
    subject: claims.sub,
    roles,
    read: readWrite || roles.includes("read-only"),
    write: readWrite,
    admin,
  };
}

export function useGrants() {
  const [g, setG] = useState(grants());
  useEffect(() => onTokenChange(() => setG(grants())), []);
  return g;
}
