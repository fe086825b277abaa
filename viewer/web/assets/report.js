// The report's pages, drawn from data/site.js and, when an item is opened, data/items/N.js.
// No network and no server: data files are scripts that call REPORT.site / REPORT.item.
"use strict";
const REPORT = (() => {
  let site = null;
  const items = {};
  const waiting = {};
  let replay = null;

  // -- DOM helpers: text always goes in as text nodes, never as markup ----------------------
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "html") el.innerHTML = v;  // only markup this package made (escaped boards)
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  const num = (v, d = 2) => (v === null || v === undefined) ? "-" :
    (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(d)) : String(v));
  const main = () => document.getElementById("main");

  function badge(state, damaged) {
    const cls = state === "finished" ? (damaged ? "warn" : "ok") : "bad";
    return h("span", {class: "badge " + cls, "data-state": state},
      state + (damaged && state === "finished" ? " · damaged" : ""));
  }

  // -- sortable tables ----------------------------------------------------------------------
  function sortKey(text) {
    const t = text.trim().replace(/^\[/, "");
    if (t === "-" || t === "") return null;
    const n = parseFloat(t.replace(/,/g, ""));
    return isNaN(n) ? t.toLowerCase() : n;
  }
  function makeSortable(root) {
    for (const table of root.querySelectorAll("table.sortable")) {
      const heads = table.querySelectorAll("thead th");
      heads.forEach((th, col) => th.addEventListener("click", () => {
        const dir = th.dataset.sort === "asc" ? "desc" : "asc";
        heads.forEach(o => delete o.dataset.sort);
        th.dataset.sort = dir;
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort((a, b) => {
          const x = sortKey(a.cells[col] ? a.cells[col].textContent : "");
          const y = sortKey(b.cells[col] ? b.cells[col].textContent : "");
          if (x === null || y === null) return (x === null) - (y === null);  // blanks last
          const c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0)
            : (typeof x === "number" ? -1 : 1);
          return dir === "asc" ? c : -c;
        });
        rows.forEach(r => body.append(r));
      }));
    }
  }

  // -- overview -----------------------------------------------------------------------------
  function itemsTable(rows) {
    const head = ["#", "Item", "State", "Score", "Judged mean", "Turns", "Calls", "Tokens",
                  "Problems"];
    return h("table", {class: "sortable items"},
      h("thead", {}, h("tr", {}, head.map((c, i) => h("th", {class: i > 2 ? "r" : ""}, c)))),
      h("tbody", {}, rows.map(r => h("tr", {class: r.damaged ? "damaged" : "",
                                            "data-item": r.n},
        h("td", {class: "r"}, r.n),
        h("td", {}, h("a", {href: "#/item/" + r.n}, r.id)),
        h("td", {}, badge(r.state, r.damaged)),
        h("td", {class: "r"}, num(r.score, 3)), h("td", {class: "r"}, num(r.judged, 2)),
        h("td", {class: "r"}, num(r.turns)), h("td", {class: "r"}, num(r.calls)),
        h("td", {class: "r"}, num(r.tokens)), h("td", {class: "r"}, num(r.problems))))));
  }

  function overview() {
    stopReplay();
    setCrumbs([]);
    const root = main();
    root.replaceChildren(h("h1", {}, site.title));
    if (site.command) root.append(h("p", {class: "dim"}, "made by ", h("code", {}, site.command)));
    if (site.sections.length >= TOC_FROM) root.append(contents());
    const sources = {};  // a path a summary names -> the section that shows it
    site.sections.forEach((s, i) => { if (s.source) sources[s.source] = i; });
    site.sections.forEach((s, i) => {
      const part = h("section", {class: "part", id: "section-" + i},
        h("h2", {}, s.title, " ", h("span", {class: "dim"}, s.where)));
      if (s.parent !== null && s.parent !== undefined)
        part.append(h("p", {}, "in ", h("a", {href: "#section-" + s.parent,
          onclick: e => { e.preventDefault(); jump("section-" + s.parent); }},
          site.sections[s.parent].title)));
      const kids = site.sections.map((c, j) => [c, j]).filter(([c]) => c.parent === i);
      if (kids.length) part.append(h("p", {}, "in it: ", kids.map(([c, j], k) => [k ? " · " : "",
        h("a", {href: "#section-" + j, onclick: e => { e.preventDefault(); jump("section-" + j); }},
          c.title)])));
      if (s.notes.length) part.append(h("ul", {class: "problems"}, s.notes.map(n => h("li", {}, n))));
      if (s.text) part.append(linkSources(h("div", {class: "text", html: s.text}), sources));
      if (s.files.length) part.append(h("p", {class: "files"}, "files: ", s.files.map((f, k) =>
        [k ? " · " : "", h("a", {href: f.href}, f.name)])));
      if (s.board) part.append(h("div", {class: "boardmd", html: s.board}));
      if (s.plot) part.append(h("img", {class: "plot", src: s.plot, alt: "the board's plot"}));
      if (s.board_json) part.append(h("p", {}, h("a", {href: s.board_json}, "the board as JSON")));
      if (s.items.length) {
        const bad = s.items.filter(r => r.damaged).length;
        part.append(h("h3", {}, `${s.items.length} item(s)` + (bad ? `, ${bad} damaged` : "")),
                    itemsTable(s.items));
      }
      root.append(part);
    });
    makeSortable(root);
  }

  // A long report opens with its contents: every section, nested under the one it is in.
  const TOC_FROM = 4;
  function contents() {
    const list = parent => {
      const kids = site.sections.map((c, j) => [c, j]).filter(([c]) =>
        (c.parent === undefined ? null : c.parent) === parent);
      return kids.length ? h("ul", {}, kids.map(([c, j]) => h("li", {},
        h("a", {href: "#section-" + j, onclick: e => { e.preventDefault(); jump("section-" + j); }},
          c.title), " ", h("span", {class: "dim"}, c.where), list(j)))) : null;
    };
    return h("nav", {class: "toc"}, h("h2", {}, "Contents"), list(null));
  }
  // A cell or code that names a file the site shows (a sweep's comparison in its summary's
  // table) becomes a link to it.
  function linkSources(root, sources) {
    for (const el of root.querySelectorAll("td, code")) {
      const i = sources[el.textContent.trim()];
      if (i === undefined) continue;
      const a = h("a", {href: "#section-" + i, onclick: e => { e.preventDefault(); jump("section-" + i); }},
        el.textContent);
      el.replaceChildren(a);
    }
    return root;
  }

  function jump(id) { const el = document.getElementById(id); if (el) el.scrollIntoView(); }
  function setCrumbs(parts) {
    document.getElementById("crumbs").replaceChildren(...parts.map(p => h("span", {}, " › ", p)));
  }

  // -- an item ------------------------------------------------------------------------------
  function loadItem(n, then) {
    if (items[n]) return then(items[n]);
    (waiting[n] = waiting[n] || []).push(then);
    if (waiting[n].length > 1) return;
    const s = h("script", {src: `data/items/${n}.js`});
    s.onerror = () => {
      delete waiting[n];
      main().replaceChildren(h("p", {class: "problems"}, `data/items/${n}.js could not be loaded`));
    };
    document.body.append(s);
  }

  function kvList(pairs) {
    return h("dl", {class: "kv"}, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "")
      .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  }

  function scoreTable(rows) {
    const keys = [];
    rows.forEach(r => Object.keys(r).forEach(k => { if (!keys.includes(k)) keys.push(k); }));
    const cell = v => (v !== null && typeof v === "object") ? JSON.stringify(v) : num(v, 3);
    return h("table", {class: "sortable evidence"},
      h("thead", {}, h("tr", {}, keys.map(k => h("th", {}, k)))),
      h("tbody", {}, rows.map(r => h("tr", {}, keys.map(k => h("td", {}, cell(r[k])))))));
  }

  function scoresPart(scores) {
    return scores.map(s => {
      const rest = Object.assign({}, s);
      ["file", "score", "rule", "evidence"].forEach(k => delete rest[k]);
      return h("div", {class: "score"},
        h("h3", {}, s.file, ": ", h("span", {class: "scorevalue"}, num(s.score, 3))),
        s.rule ? h("p", {}, "rule: ", h("code", {}, s.rule)) : null,
        s.unscored ? h("p", {class: "problems"}, "unscored: " + s.unscored) : null,
        Array.isArray(s.evidence) && s.evidence.length ?
          [h("h4", {}, "evidence (which event, which rule)"), scoreTable(s.evidence)] : null,
        h("details", {}, h("summary", {}, "every field"),
          h("pre", {}, JSON.stringify(rest, null, 1))));
    });
  }

  function verdictBox(v) {
    const scores = Object.entries(v.scores || {}).map(([k, x]) => `${k.replace(/_/g, " ")} ${num(x, 2)}`);
    const flags = Object.entries(v.flags || {}).filter(([, on]) => on).map(([k]) => k.replace(/_/g, " "));
    const cls = "verdict" + (v.status !== "ok" ? " " + v.status : "") + (v.usable ? "" : " unusable");
    return h("div", {class: cls},
      h("b", {}, v.model ? `${v.judge} · ${v.model}` : v.judge), ": ",
      [...scores, ...flags].join(" · "),
      v.usable ? "" : ` (${v.status}: left out of means)`,
      Object.entries(v.notes || {}).map(([k, note]) =>
        h("div", {class: "note"}, `${k.replace(/_/g, " ")}: ${note}`)));
  }

  function conversationsPart(convs) {
    return convs.map(c => h("div", {class: "conversation", "data-conversation": c.id},
      h("h3", {}, `${c.id} · ${c.participants.join(", ")}`,
        h("span", {class: "dim"}, ` · ${c.clock}` + (c.location ? ` · ${c.location}` : ""))),
      c.turns.map(t => h("div", {class: "turn"},
        h("div", {}, h("span", {class: "who"}, t.speaker),
          t.to.length ? h("span", {class: "dim"}, " → " + t.to.join(", ")) : null,
          " ", h("span", {class: "when"}, t.clock), h("div", {class: "text"}, t.text)),
        h("div", {class: "verdicts"}, t.verdicts.map(verdictBox))))));
  }

  function callsPart(calls) {
    const t = calls.total;
    const roles = calls.by_tag.some(r => r.role);  // calls record their role (or not, if old)
    return [h("p", {}, `${t.calls} call(s), ${t.prompt_tokens} tokens in, ${t.completion_tokens} out; ` +
                       `${t.cached} from the cache, ${t.retries} retries, ${t.faults} fault(s)` +
                       (calls.models.length ? `; models ${calls.models.join(", ")}` : "")),
      t.calls ? h("table", {class: "sortable calls"},
        h("thead", {}, h("tr", {}, (roles ? ["Role", "Model"] : []).map(c => h("th", {}, c)),
          ["Purpose", "Calls", "Tokens in", "Tokens out", "Cached", "Retries", "Faults"]
            .map((c, i) => h("th", {class: i ? "r" : ""}, c)))),
        h("tbody", {}, calls.by_tag.map(r => h("tr", {class: r.faults ? "damaged" : ""},
          roles ? [h("td", {}, r.role || "-"), h("td", {}, r.model)] : null,
          h("td", {}, r.tag), ...["calls", "prompt_tokens", "completion_tokens", "cached",
          "retries", "faults"].map(k => h("td", {class: "r"}, r[k])))))) : null];
  }

  function judgmentsPart(js) {
    return h("table", {class: "sortable judgments"},
      h("thead", {}, h("tr", {}, ["Judge", "Model", "Status", "Scores", "Flags", "Turns judged",
        "Faults", "Tokens"].map(c => h("th", {}, c)))),
      h("tbody", {}, js.map(j => h("tr", {class: j.status === "ok" ? "" : "damaged"},
        h("td", {}, j.judge), h("td", {}, j.model), h("td", {}, j.status),
        h("td", {}, [...Object.entries(j.scores).map(([k, v]) => `${k} ${num(v)}`),
          ...Object.entries(j.turn_scores || {}).map(([k, v]) =>
            `${k} ${num(v.mean)} (mean of ${v.n} turn${v.n === 1 ? "" : "s"})`)].join(", ") || "-"),
        h("td", {}, [...Object.entries(j.flags).filter(([, v]) => v).map(([k]) => k),
          ...Object.entries(j.turn_flags || {}).filter(([, v]) => v.raised).map(([k, v]) =>
            `${k} on ${v.raised} of ${v.n} turns`)].join(", ") || "-"),
        h("td", {class: "r"}, j.turns), h("td", {}, j.faults.join("; ") || "-"),
        h("td", {class: "r"}, j.prompt_tokens + j.completion_tokens)))));
  }

  function itemPage(n, d) {
    stopReplay();
    const s = site.sections[d.section];
    setCrumbs([h("a", {href: "#/"}, s ? s.title : "report"), d.id]);
    const root = main();
    root.replaceChildren(h("h1", {}, d.id, " ", badge(d.state, d.damaged)));
    const reason = d.reason && !d.problems.includes(d.reason) ? d.reason : null;
    if (d.problems.length || reason) root.append(h("ul", {class: "problems"},
      reason ? h("li", {}, reason) : null, d.problems.map(p => h("li", {}, p))));
    const r = d.result || {};
    root.append(h("section", {class: "part"}, h("h2", {}, "Run"), kvList([
      ["scenario", d.scenario], ["seed", d.seed], ["start", d.start_time], ["world", d.world],
      ["models", (d.model_names || d.models) && Object.entries(d.model_names || d.models).map(([k, v]) => `${k}: ${v}`).join("; ")],
      ["result", r.status && `${r.status}, ${r.events} events, ${r.llm_calls} calls, ` +
        `${num(r.wall_time_s)} s wall` + (r.error ? `; ${r.error}` : "")],
      ["warnings", (r.warnings || []).join("; ")],
      ["code", d.code_version], ["where", d.where]]),
      d.command ? [h("h3", {}, "Reproduce"), h("pre", {class: "command"}, d.command),
        d.command_how ? h("p", {class: "dim how"}, d.command_how) : null,
        (d.reads || []).length ? h("div", {class: "reads"},
          h("p", {}, "It reads files this site does not ship (put them where the command " +
            "names them to run it):"),
          h("ul", {}, d.reads.map(r => h("li", {}, h("code", {}, r.file), ` (${r.as})`)))) : null]
        : null,
      h("details", {}, h("summary", {}, "the header's configuration"),
        h("pre", {}, JSON.stringify({models: d.models, backend: d.backend, config: d.config}, null, 1)))));
    if (d.scores.length) root.append(h("section", {class: "part"}, h("h2", {}, "Score"), scoresPart(d.scores)));
    if (d.judgments.length) root.append(h("section", {class: "part"}, h("h2", {}, "Judgments"), judgmentsPart(d.judgments)));
    if (d.replay) root.append(h("section", {class: "part"}, h("h2", {}, "Replay"), replayPart(d.replay)));
    if (d.conversations.length) root.append(h("section", {class: "part"},
      h("h2", {}, "Transcript"), conversationsPart(d.conversations)));
    if (d.calls) root.append(h("section", {class: "part"}, h("h2", {}, "Calls and tokens"), callsPart(d.calls)));
    if (d.kinds) root.append(h("section", {class: "part"}, h("h2", {}, "Events"),
      h("p", {}, Object.entries(d.kinds).map(([k, c]) => `${k} ${c}`).join(" · "))));
    makeSortable(root);
    window.scrollTo(0, 0);
  }

  // -- the map replay -----------------------------------------------------------------------
  const AGENT_COLOURS = ["#e63946", "#1d71d6", "#2ea043", "#9c27b0", "#f57c00", "#0096a0",
    "#c81e8c", "#6e5a1e", "#5a3cc8", "#14785a", "#be3c14", "#3c648c"];

  const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                  "Dec"];

  function replayPart(rp) {
    const m = rp.map;
    const scale = Math.max(2, Math.min(14, Math.floor(1000 / m.width)));
    const base = h("canvas", {width: m.width * scale, height: m.height * scale});
    const g = base.getContext("2d");
    m.rows.forEach((row, y) => row.forEach((c, x) => {
      g.fillStyle = m.palette[c]; g.fillRect(x * scale, y * scale, scale, scale);
    }));
    g.textAlign = "center"; g.textBaseline = "middle";
    const taken = [];  // labels placed so far: a label that would cover one is left out
    for (const [name, cx, cy, sector, span] of m.labels) {
      g.font = sector ? "bold 12px system-ui" : "10px system-ui";
      const w = g.measureText(name).width + 6, x = cx * scale, y = cy * scale;
      const box = [x - w / 2, y - 8, x + w / 2, y + 8];
      if (!sector && w > span * scale) continue;
      if (taken.some(b => b[0] < box[2] && box[0] < b[2] && b[1] < box[3] && box[1] < b[3])) continue;
      taken.push(box);
      g.fillStyle = sector ? "rgba(20,22,28,.78)" : "rgba(255,255,255,.7)";
      g.fillRect(box[0], box[1], w, 16);
      g.fillStyle = sector ? "#fff" : "#222";
      g.fillText(name, x, y + 1);
    }
    const canvas = h("canvas", {width: base.width, height: base.height, class: "map"});
    const slider = h("input", {type: "range", min: 0, max: Math.ceil(rp.end), step: 1, value: 0,
                               "aria-label": "time"});
    const clock = h("span", {class: "clock"});
    const play = h("button", {type: "button"}, "play");
    const said = h("div", {class: "said"});
    const start = new Date(rp.start_time.replace(" ", "T"));
    const agents = rp.agents.map((a, i) => ({...a, colour: AGENT_COLOURS[i % AGENT_COLOURS.length],
      initials: a.name.split(/\s+/).map(w => w[0]).join("").slice(0, 2).toUpperCase()}));
    const doing = {};  // agent -> [[t, action]] in time order
    for (const [t, who, what] of rp.actions) (doing[who] = doing[who] || []).push([t, what]);
    const legend = h("div", {class: "legend"});
    const lines = rp.speech.map(([t, who, text]) =>
      h("div", {"data-t": t}, h("span", {class: "dim"}, fmt(t) + " "), h("b", {}, who + ": "), text));
    said.append(...lines);
    replay = {t: 0, playing: false, timer: null, agents, canvas, slider};

    // The day with the time (a run over two days has two 06:38s): "Tue 14 Feb 06:38:00",
    // read in the run's own clock (its start has no zone, so neither does the page's date).
    function fmt(t) {
      const d = new Date(start.getTime() + t * 1000);
      return `${DAYS[d.getDay()]} ${d.getDate()} ${MONTHS[d.getMonth()]} ` +
        d.toTimeString().slice(0, 8);
    }
    // Where an agent is drawn at t, as the pygame view draws it (viewer/positions.py): on
    // path[i] from t0 + i * spt; the disc glides from the edge shared with the tile before to
    // the centre, then on to the edge with the tile after, never leaving the logged tile.
    function where(a, t) {
      const legs = a.legs;
      let lo = 0, hi = legs.length - 1, k = -1;
      while (lo <= hi) { const mid = (lo + hi) >> 1; if (legs[mid][0] <= t + 1e-6) { k = mid; lo = mid + 1; } else hi = mid - 1; }
      if (k < 0) return null;
      const [t0, spt, last, p] = legs[k];
      const at = i => [p[2 * i] + 0.5, p[2 * i + 1] + 0.5];
      if (!spt) return at(0);
      const walked = t <= t0 ? 0 : (t - t0) / spt + 1e-6;
      const i = Math.min(Math.floor(walked), last);
      const f = Math.min(walked - i, 1), here = at(i);
      const mix = (u, v, w) => [u[0] + (v[0] - u[0]) * w, u[1] + (v[1] - u[1]) * w];
      if (f < 0.5 && i > 0) return mix(mix(at(i - 1), here, 0.5), here, f * 2);
      if (f > 0.5 && i < last) return mix(here, mix(here, at(i + 1), 0.5), (f - 0.5) * 2);
      return here;
    }
    function draw() {
      const t = replay.t;
      const c = canvas.getContext("2d");
      c.drawImage(base, 0, 0);
      const spoken = {};
      for (const [st, who, text] of rp.speech) { if (st <= t && t - st <= 60) spoken[who] = text; }
      const spots = {};
      c.textAlign = "center"; c.textBaseline = "middle";
      for (const a of agents) {
        const p = where(a, t);
        if (!p) continue;
        spots[a.name] = p;
        const r = Math.max(7, scale * 1.1);
        c.beginPath(); c.arc(p[0] * scale, p[1] * scale, r, 0, 2 * Math.PI);
        c.fillStyle = a.colour; c.fill(); c.lineWidth = 2; c.strokeStyle = "#fff"; c.stroke();
        c.fillStyle = "#fff"; c.font = `bold ${Math.round(r)}px system-ui`;
        c.fillText(a.initials, p[0] * scale, p[1] * scale + 1);
      }
      for (const [who, text] of Object.entries(spoken)) {
        const p = spots[who]; if (!p) continue;
        const shown = text.length > 60 ? text.slice(0, 57) + "…" : text;
        c.font = "12px system-ui";
        const w = c.measureText(shown).width + 12;
        const x = Math.min(Math.max(p[0] * scale, w / 2 + 2), canvas.width - w / 2 - 2);
        const above = p[1] * scale - scale - 16;
        const y = above >= 12 ? above : p[1] * scale + scale + 16;  // at the top: below them
        c.fillStyle = "rgba(255,255,250,.95)"; c.strokeStyle = "#28282f"; c.lineWidth = 1;
        c.fillRect(x - w / 2, y - 10, w, 20); c.strokeRect(x - w / 2, y - 10, w, 20);
        c.fillStyle = "#111"; c.fillText(shown, x, y);
      }
      replay.spots = spots; replay.spoken = spoken;
      legend.replaceChildren(...agents.map(a => {
        const now = (doing[a.name] || []).filter(([at]) => at <= t).pop();
        return h("div", {}, h("span", {class: "dot", style: `background:${a.colour}`}, a.initials),
          " ", h("b", {}, a.name), spots[a.name] ? (now ? ` — ${now[1]}` : "") : " — not here yet");
      }));
      clock.textContent = fmt(t);
      let last = null;
      for (const line of lines) { line.classList.remove("now"); if (+line.dataset.t <= t) last = line; }
      if (last) { last.classList.add("now"); }
    }
    function seek(t) { replay.t = Math.max(0, Math.min(rp.end, t)); slider.value = replay.t; draw(); }
    replay.seek = seek;
    slider.addEventListener("input", () => seek(+slider.value));
    play.addEventListener("click", () => {
      replay.playing = !replay.playing;
      play.textContent = replay.playing ? "pause" : "play";
      clearInterval(replay.timer);
      if (replay.playing) replay.timer = setInterval(() => {
        if (replay.t >= rp.end) { replay.playing = false; play.textContent = "play"; clearInterval(replay.timer); return; }
        seek(replay.t + Math.max(10, rp.end / 600));
      }, 50);
    });
    setTimeout(draw, 0);
    return h("div", {class: "replay"},
      h("div", {}, canvas, h("div", {class: "controls"}, play, slider, clock), legend,
        h("p", {class: "dim"}, `${m.title || m.name}: ${agents.length} agent(s); ` +
          "bubbles show what was said in the last minute")),
      h("div", {}, h("h3", {}, "Said"), said));
  }
  function stopReplay() { if (replay) clearInterval(replay.timer); replay = null; }

  // -- routing ------------------------------------------------------------------------------
  function route() {
    if (!site) return;
    const m = location.hash.match(/^#\/item\/(\d+)$/);
    if (m) return loadItem(+m[1], d => itemPage(+m[1], d));
    overview();
    if (location.hash.startsWith("#section-")) jump(location.hash.slice(1));
  }
  window.addEventListener("hashchange", route);

  return {
    site(data) {
      performance.mark("report-data");  // what the browser took to read and run site.js
      site = data; document.title = data.title; route();
      performance.mark("report-drawn");
    },
    item(n, data) {
      items[n] = data;
      (waiting[n] || []).forEach(f => f(data));
      delete waiting[n];
    },
    // For checks (the browser test) and the curious: where each agent is drawn now.
    replayState() {
      return replay ? {t: replay.t, spots: replay.spots || {}, spoken: replay.spoken || {}} : null;
    },
    seek(t) { if (replay) replay.seek(t); },
  };
})();
