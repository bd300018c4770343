// Draws the report from the JSON in #report-data. Manifest text only ever reaches the page
// through textContent.
"use strict";
window.addEventListener("error", (e) => {
  document.body.dataset.errors = (document.body.dataset.errors || "") + e.message + "\n";
});

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function drawCluster(target, finding, step) {
  target.replaceChildren();
  const state = step.state;
  const placed = new Map();
  for (const [pod, node, phase] of state.pods) {
    if (!placed.has(node)) placed.set(node, []);
    placed.get(node).push([pod, phase]);
  }
  const podBox = (pod, phase) => {
    const box = el("span", "pod " + phase, pod);
    box.title = pod + ": " + phase;
    if (step.changed === pod) box.classList.add("changed");
    return box;
  };
  for (const [groupName, nodes] of finding.groups) {
    const group = el("div", "group");
    group.append(el("div", "label", groupName));
    const row = el("div", "nodes");
    for (const name of nodes) {
      const node = el("div", "node");
      if (state.down.includes(name)) node.classList.add("down");
      if (state.cordoned.includes(name)) node.classList.add("cordoned");
      if (step.changed === name) node.classList.add("changed");
      let label = name;
      if (state.down.includes(name)) label += " (down)";
      else if (state.cordoned.includes(name)) label += " (cordoned)";
      node.append(el("div", "label", label));
      for (const [pod, phase] of placed.get(name) || []) node.append(podBox(pod, phase));
      row.append(node);
    }
    group.append(row);
    target.append(group);
  }
  const pending = el("div", "pending-area");
  pending.append(el("div", "label muted", "Pending (no node)"));
  for (const [pod, phase] of placed.get("") || []) pending.append(podBox(pod, phase));
  target.append(pending);
}

function drawSource(target, finding, step) {
  target.replaceChildren();
  // A step no field drives (a node failing, a pod starting) shows the finding's cause.
  const at = step.at || finding.at;
  const excerpt = step.at ? step.excerpt : finding.excerpt;
  if (!at) {
    target.append(el("span", "muted", "No manifest field drives this step."));
    return;
  }
  target.append(el("div", "muted", step.at ? at : "caused by " + at));
  const line = Number(at.split(":").pop());
  for (const [n, text] of excerpt) {
    const row = el("span", n === line ? "hit" : "", String(n).padStart(4) + "  " + text);
    target.append(row, n === line ? "" : "\n");
  }
}

function drawFinding(parent, finding, index) {
  const box = el("section", "finding " + finding.level);
  box.id = "finding-" + index;
  box.append(el("h3", "", finding.check + (finding.suppressed !== null ? " (suppressed)" : "")));
  box.append(el("p", "", finding.headline));
  if (finding.at) box.append(el("p", "mono", "caused by " + finding.at));
  if (finding.suppressed !== null) box.append(el("p", "muted", "Suppressed: " + finding.suppressed));
  if (finding.fix !== null) box.append(el("p", "fix", "Fix (verified by kivi-lint): " + finding.fix));
  if (finding.steps.length === 0) {
    parent.append(box);
    return;
  }
  const controls = el("div", "controls");
  const prev = el("button", "", "◀ previous");
  const next = el("button", "", "next ▶");
  const slider = el("input");
  slider.type = "range";
  slider.min = "0";
  slider.max = String(finding.steps.length - 1);
  slider.setAttribute("aria-label", "step");
  const counter = el("span", "mono");
  controls.append(prev, slider, next, counter);
  const timeline = el("div", "timeline");
  const steps = el("ol", "steps");
  const right = el("div");
  const cluster = el("div", "cluster");
  const source = el("div", "source mono");
  right.append(cluster, source);
  timeline.append(steps, right);
  const items = finding.steps.map((s, i) => {
    const li = el("li");
    li.append(el("span", "mono muted", String(i + 1).padStart(2) + " "), el("span", "actor", s.actor + ": "));
    li.append(el("span", "", s.message));
    li.addEventListener("click", () => show(i));
    steps.append(li);
    return li;
  });
  function show(i) {
    slider.value = String(i);
    counter.textContent = "step " + (i + 1) + " of " + finding.steps.length;
    items.forEach((li, k) => {
      li.classList.toggle("current", k === i);
      li.classList.toggle("future", k > i);
    });
    drawCluster(cluster, finding, finding.steps[i]);
    drawSource(source, finding, finding.steps[i]);
    reveal(i);
  }
  // Keep the current step in view inside the list (the page itself does not move): the
  // report opens at the last step, which a long trace would otherwise hide. Before the
  // finding is in the document nothing has a place yet: main() reveals it then.
  function reveal(i) {
    if (!steps.isConnected) {
      unrevealed.push(() => reveal(i));
      return;
    }
    const li = items[i].getBoundingClientRect();
    const box = steps.getBoundingClientRect();
    if (li.top < box.top || li.bottom > box.bottom) {
      steps.scrollTop += li.top - box.top - (box.height - li.height) / 2;
    }
    steps.dataset.scrollTop = String(Math.round(steps.scrollTop));
  }
  slider.addEventListener("input", () => show(Number(slider.value)));
  prev.addEventListener("click", () => show(Math.max(0, Number(slider.value) - 1)));
  next.addEventListener("click", () => show(Math.min(finding.steps.length - 1, Number(slider.value) + 1)));
  if (finding.topology) box.append(el("p", "muted", finding.timeline + " on " + finding.topology));
  box.append(controls, timeline);
  parent.append(box);
  show(finding.steps.length - 1);
}

/* "1 unit", "2 units": what the human report and the job summary say too. */
function count(n, noun) {
  return n + " " + noun + (n === 1 ? "" : "s");
}

/* Findings drawn before their section is in the document, to scroll once it is. */
const unrevealed = [];

function main() {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const findings = data.units.reduce((n, u) => n + u.findings.length, 0);
  document.getElementById("summary").textContent =
    "kivi-lint " + data.version + " · " + count(data.units.length, "unit") + " checked · " +
    count(findings, "finding") + " · exit code " + data.exit_code + " (" + data.exit_description + ")";
  const main = document.getElementById("units");
  if (data.diagnostics.length > 0) {
    const list = el("ul", "diagnostics mono");
    for (const d of data.diagnostics) list.append(el("li", "", d));
    main.append(list);
  }
  let index = 0;
  for (const unit of data.units) {
    const section = el("section", "unit");
    section.append(el("h2", "", unit.name));
    section.append(el("div", "muted mono", unit.scope));
    const verdicts = el("ul", "verdicts");
    for (const [check, verdict, detail] of unit.verdicts) {
      const li = el("li", "v-" + verdict, check + " " + verdict.replace("-", " "));
      if (detail) li.append(el("span", "muted", " · " + detail));
      verdicts.append(li);
    }
    section.append(verdicts);
    for (const finding of unit.findings) drawFinding(section, finding, index++);
    main.append(section);
  }
  if (data.units.length === 0) main.append(el("p", "muted", "No unit was verified."));
  unrevealed.splice(0).forEach((reveal) => reveal());
  document.body.dataset.rendered = String(findings);
}

main();
