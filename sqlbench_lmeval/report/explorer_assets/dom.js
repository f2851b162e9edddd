// The one way our pages make elements (explorer, leaderboard): attributes by setAttribute,
// "text" as textContent, "className", "on<event>" listeners; never innerHTML, so no text from
// a run can become markup.
"use strict";

window.sqlbenchElement = function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null) continue;
    if (name === "text") node.textContent = String(value);
    else if (name === "className") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
};
