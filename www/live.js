// Live mode: polls the gateway's /__edgeshed/stats through the page server's
// /gateway/ proxy (scripts/serve-www.mjs), charts the chosen scope and the
// current limit of every scope (adaptive limits move), and fires bursts of
// requests at the gateway through the page server's /__www/burst.
import { SeriesStore } from "./metrics.js";
import { COLORS, LaneView, formatMs } from "./lane.js";
import { TimeChart } from "./chart.js";

// One colour per scope in the limits chart (Okabe-Ito, after the lanes' own).
const SCOPE_COLORS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#374151"];

const POLL_MS = 250;
const FIELDS = ["inFlight", "queued", "admitted", "shed", "queueTimeouts", "limit"];

const $ = (selector) => document.querySelector(selector);
const number = new Intl.NumberFormat("en-US");

const COUNTERS = [
  { key: "sent", label: "requests sent", color: COLORS.offered, hint: "burst requests sent to the gateway" },
  { key: "ok", label: "answered 2xx", color: COLORS.admitted, hint: "admitted and answered (200)" },
  { key: "s503", label: "shed (503)", color: COLORS.shed, hint: "overloaded: shed or queue timeout, with Retry-After" },
  { key: "s504", label: "deadline (504)", color: COLORS.deadline, hint: "the route's deadline or an origin's timeout passed" },
  { key: "s502", label: "failed (502)", color: "#7c3aed", hint: "a required origin failed" },
  { key: "other", label: "other", color: "#9ca3af", hint: "any other status, or no answer" },
];

export class LiveMode {
  constructor({ hook, windowS }) {
    this.hook = hook;
    this.windowS = windowS;
    this.running = false;
    this.timer = null;
    this.start0 = performance.now();
    this.stores = new Map(); // scope -> SeriesStore
    this.scope = "global";
    this.scopes = [];
    this.tally = { sent: 0, ok: 0, s503: 0, s504: 0, s502: 0, other: 0 };
    this.bursting = false;
    this.view = new LaneView($("#live-lanes"), {
      id: "live",
      title: "Gateway: global",
      subtitle: "Charts of one limiter scope; counters of the answers to your bursts.",
      tone: "good",
      counters: COUNTERS,
      throughput: ["admitted", "shed"],
      latencyTitle: "Latency of 2xx burst requests",
    });
    // The current limit of each scope over time: `limit:<scope>` series.
    this.limitStore = new SeriesStore();
    this.limitChart = null;
    this.hookState = { ok: false, polls: 0, stats: null, gateway: null, tally: this.tally, bursts: 0, lastBurst: null, scope: this.scope };
    hook.live = this.hookState;

    const n = $("#burst-n");
    const showN = () => ($("#burst-n-out").textContent = n.value);
    n.addEventListener("input", showN);
    showN();
    $("#burst").addEventListener("click", () => this.burst());
    $("#burst-repeat").addEventListener("change", (event) => {
      clearInterval(this.repeat);
      if (event.target.checked) {
        this.repeat = setInterval(() => this.running && !this.bursting && this.burst(), 1000);
        if (!this.bursting) this.burst();
      }
    });
    $("#live-scope").addEventListener("change", (event) => {
      this.scope = event.target.value;
      this.hookState.scope = this.scope;
      this.draw();
    });
  }

  start() {
    if (this.running) return;
    this.running = true;
    this.setStatus("connecting", "connecting…");
    this.loadInfo();
    this.poll();
  }

  stop() {
    this.running = false;
    clearTimeout(this.timer);
    $("#burst-repeat").checked = false;
    clearInterval(this.repeat);
    this.setStatus("idle", "not polling");
  }

  setStatus(state, text) {
    const el = $("#live-status");
    el.dataset.state = state;
    el.querySelector("span").textContent = text;
  }

  async loadInfo() {
    if (this.gateway) return;
    try {
      const res = await fetch("/__www/info", { cache: "no-store" });
      if (res.ok) {
        this.gateway = (await res.json()).gateway;
        this.hookState.gateway = this.gateway;
      }
    } catch {
      // reported by poll()
    }
  }

  async poll() {
    if (!this.running) return;
    const t = (performance.now() - this.start0) / 1000;
    try {
      const [statsRes, latencyRes] = await Promise.all([
        fetch("/gateway/__edgeshed/stats", { cache: "no-store" }),
        fetch("/__www/latency", { cache: "no-store" }),
      ]);
      if (!statsRes.ok) {
        const body = await statsRes.json().catch(() => ({}));
        throw new Error(
          statsRes.status === 401 || statsRes.status === 403
            ? "the gateway wants a stats token: set EDGESHED_STATS_TOKEN for serve-www"
            : body.error === "gateway_unreachable"
              ? `no gateway at ${body.gateway}: start it with ./scripts/dev.sh`
              : statsRes.status === 404
                ? 'the gateway keeps /__edgeshed/* closed: set "statsPublic": true or a "statsToken" in its EDGESHED configuration'
                : `/__edgeshed/stats answered ${statsRes.status}`,
        );
      }
      const stats = await statsRes.json();
      const latency = latencyRes.ok ? await latencyRes.json() : { p50Ms: null, p99Ms: null };
      if (!this.running) return;
      this.record(t, stats, latency);
      this.setStatus("ok", `live: ${this.gateway ?? "gateway"}`);
      this.hookState.ok = true;
      this.hookState.error = null;
    } catch (error) {
      this.hookState.ok = false;
      this.hookState.error = String(error?.message ?? error);
      this.setStatus("error", error?.message?.startsWith("no gateway") ? error.message : `gateway unreachable (${error?.message ?? error})`);
    }
    if (this.running) this.timer = setTimeout(() => this.poll(), POLL_MS);
  }

  record(t, stats, latency) {
    const scopes = [["global", stats.global], ...Object.entries(stats.origins ?? {}).map(([name, s]) => [name, s])];
    const names = scopes.map(([name]) => name);
    if (names.join() !== this.scopes.join()) this.setScopes(names);
    for (const [name, s] of scopes) {
      let store = this.stores.get(name);
      if (!store) this.stores.set(name, (store = new SeriesStore()));
      store.sample(
        t,
        { inFlight: s.inFlight, queued: s.queued, p50: latency.p50Ms, p99: latency.p99Ms },
        { admitted: s.admitted, shed: s.shed + s.queueTimeouts },
      );
    }
    this.limitStore.sample(t, Object.fromEntries(scopes.map(([name, s]) => [`limit:${name}`, s.limit])));
    this.renderTable(scopes);
    this.renderTopKeys(scopes);
    this.hookState.stats = stats;
    this.hookState.polls++;
    this.now = t;
    this.limits = Object.fromEntries(scopes.map(([name, s]) => [name, s.limit]));
    this.draw();
  }

  setScopes(names) {
    this.scopes = names;
    // The limits chart has one series per scope: made again for new scopes.
    this.limitChart?.resize.disconnect();
    this.limitChart?.root.remove();
    this.limitChart = new TimeChart($("#live-lanes"), {
      title: "Current limit of each scope",
      yLabel: "limit",
      unit: "",
      minYMax: 4,
      series: names.map((name, i) => ({
        key: `limit:${name}`,
        label: name === "global" ? "global" : `origin ${name}`,
        color: SCOPE_COLORS[i % SCOPE_COLORS.length],
        width: 2,
      })),
    });
    this.limitChart.root.id = "live-limits";
    const select = $("#live-scope");
    select.replaceChildren(
      ...names.map((name) => {
        const option = document.createElement("option");
        option.value = name;
        option.textContent = name === "global" ? "global (the whole gateway)" : `origin: ${name}`;
        return option;
      }),
    );
    if (!names.includes(this.scope)) this.scope = names[0];
    select.value = this.scope;
  }

  renderTable(scopes) {
    const body = $("#live-table tbody");
    const rows = scopes.map(([name, s]) => {
      const tr = document.createElement("tr");
      tr.dataset.scope = name;
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = name;
      if (name !== "global") th.title = `origin ${name}`;
      tr.append(th);
      for (const field of FIELDS) {
        const td = document.createElement("td");
        td.dataset.field = field;
        td.textContent = number.format(s[field]);
        if ((field === "shed" || field === "queueTimeouts") && s[field] > 0) td.className = "bad";
        if (field === "admitted" && s[field] > 0) td.className = "good";
        tr.append(td);
      }
      return tr;
    });
    body.replaceChildren(...rows);
  }

  /** The top refused keys of every scope: a key by its first bytes, "(no key)" for the requests without one. */
  renderTopKeys(scopes) {
    const rows = [];
    for (const [name, s] of scopes) {
      for (const [at, refused] of (s.topRefusedKeys ?? []).entries()) {
        const tr = document.createElement("tr");
        tr.dataset.scope = name;
        const cells = [name, String(at + 1), refused.key ?? "(no key)", number.format(refused.refused)];
        for (const [i, text] of cells.entries()) {
          const cell = document.createElement(i === 0 ? "th" : "td");
          if (i === 0) cell.scope = "row";
          cell.dataset.field = ["scope", "rank", "key", "refused"][i];
          cell.textContent = text;
          tr.append(cell);
        }
        const key = tr.querySelector('[data-field="key"]');
        if (refused.key === null) key.className = "muted";
        else key.title = "the key's first 16 bytes (never its whole value)";
        const count = tr.querySelector('[data-field="refused"]');
        count.className = "bad";
        if (refused.overcount > 0) count.title = `may overcount by up to ${number.format(refused.overcount)} (space-saving counters)`;
        rows.push(tr);
      }
    }
    $("#live-top-keys tbody").replaceChildren(...rows);
    $("#live-top-keys-empty").hidden = rows.length > 0;
  }

  draw() {
    const store = this.stores.get(this.scope);
    this.view.el.querySelector("h2").textContent = this.scope === "global" ? "Gateway: global limiter" : `Gateway: origin ${this.scope}`;
    this.view.setCounters(this.tally);
    if (!store) return;
    const limit = this.limits?.[this.scope];
    this.view.draw(store.store, {
      now: this.now,
      windowS: this.windowS,
      refs: { concurrency: limit ? [{ value: limit, label: `limit ${limit}`, color: COLORS.limit }] : [] },
    });
    this.limitChart?.draw(this.limitStore.store, { now: this.now, windowS: this.windowS });
  }

  async burst() {
    if (this.bursting) return;
    const n = Number($("#burst-n").value);
    const path = $("#burst-path").value.trim() || "/aggregate";
    const button = $("#burst");
    const result = $("#burst-result");
    this.bursting = true;
    button.disabled = true;
    button.textContent = "Firing…";
    try {
      const res = await fetch(`/__www/burst?n=${n}&path=${encodeURIComponent(path)}`, { method: "POST" });
      const body = await res.json();
      if (!res.ok) throw new Error(body.message ?? `burst answered ${res.status}`);
      for (const [status, count] of Object.entries(body.statuses)) {
        const code = Number(status);
        this.tally.sent += count;
        if (code >= 200 && code < 300) this.tally.ok += count;
        else if (code === 503) this.tally.s503 += count;
        else if (code === 504) this.tally.s504 += count;
        else if (code === 502) this.tally.s502 += count;
        else this.tally.other += count;
      }
      this.hookState.bursts++;
      this.hookState.lastBurst = body;
      const parts = Object.entries(body.statuses)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([status, count]) => `${status === "0" ? "no answer" : status} ×${count}`);
      result.textContent = `${n} × GET ${path}: ${parts.join(" · ")} in ${formatMs(body.ms)}` +
        (body.p50Ms != null ? ` (2xx p50 ${formatMs(body.p50Ms)}, p99 ${formatMs(body.p99Ms)})` : "");
      result.classList.remove("warn");
    } catch (error) {
      result.textContent = `Burst failed: ${error?.message ?? error}`;
      result.classList.add("warn");
    } finally {
      this.bursting = false;
      button.disabled = false;
      button.textContent = "Fire burst";
      this.view.setCounters(this.tally);
    }
  }
}
