/* Heron UI: the tracker's REST API (same origin). getJSON answers the body of a 2xx, or
 * throws an ApiError carrying the HTTP status (0: no answer) and the API's "detail". */

export class ApiError extends Error {
  constructor(status, detail) { super(detail); this.status = status; }
}

// a query string of the params set (null and undefined left out)
export function q(params) {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) search.append(k, v);
  return search.toString();
}

export async function getJSON(path) {
  let response;
  try {
    response = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store" });
  } catch (err) {
    throw new ApiError(0, "the server did not answer (" + err.message + ")");
  }
  let body = null;
  try { body = await response.json(); } catch (err) { body = null; }
  if (!response.ok) {
    const detail = body && typeof body.detail === "string" ? body.detail : response.statusText;
    throw new ApiError(response.status, detail || ("HTTP " + response.status));
  }
  return body;
}
