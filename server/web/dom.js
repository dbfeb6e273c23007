// A small helper to build DOM nodes: h("div", {class: "x", onclick}, child...).

export function h(tag, attrs = {}, ...children) {
  const el = tag === "svg" || SVG_TAGS.has(tag)
    ? document.createElementNS("http://www.w3.org/2000/svg", tag)
    : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value == null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    // Through the CSSOM: the page's policy allows no inline style attributes.
    else if (key === "style") {
      for (const decl of String(value).split(";")) {
        const at = decl.indexOf(":");
        if (at > 0) el.style.setProperty(decl.slice(0, at).trim(), decl.slice(at + 1).trim());
      }
    }
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const SVG_TAGS = new Set(["line", "circle", "text", "g", "path", "marker", "defs", "rect", "title"]);

export function clear(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c != null && c !== false));
  return el;
}
