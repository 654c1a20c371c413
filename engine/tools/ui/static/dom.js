/* Heron UI: building the page's elements. HTML and SVG elements are made with DOM calls
 * and every value from the API is set as text (textContent) or an attribute, never
 * parsed as markup; the status line; a table with a placeholder row when it has none. */

export const SVG_NS = "http://www.w3.org/2000/svg";

export function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined) continue;
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

export function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

export function setStatus(node, error, text) {
  node.className = error ? "status error" : "status";
  node.textContent = text;
}

// a table of [header, class, tooltip] columns; `empty` fills one row when there is none
// (the checkpoints and Kafka lag cards)
export function dataTable(id, heads, rows, empty) {
  const body = el("tbody", {}, ...rows);
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: String(heads.length), class: "muted", text: empty })));
  return el("table", { id }, el("thead", {}, el("tr", {},
    ...heads.map(([h, c, tip]) => el("th", { class: c || null, title: tip || null, text: h })))), body);
}
