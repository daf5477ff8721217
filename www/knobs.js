// The simulation's knobs: their inputs (initial values from the URL, see
// app.js), their printed values, and the Limiter options they make. The
// algorithm selector picks a fixed limit (maxInFlight) or an adaptive one.
// The criticality mix: the shares of critical and sheddable calls (default
// ones are the rest; moving one past 100 % in all moves the other down).

const params = new URLSearchParams(location.search);
const $ = (selector) => document.querySelector(selector);

export const KNOBS = {
  offered: { format: (v) => `${v} req/s` },
  capacity: { format: (v) => `${v}` },
  latency: { format: (v) => `${v} ms` },
  maxInFlight: { format: (v) => `${v}` },
  maxQueue: { format: (v) => (v === 0 ? "0 (shed at once)" : `${v}`) },
  queueTimeoutMs: { format: (v) => `${v} ms` },
  deadlineMs: { format: (v) => (v === 0 ? "off" : `${v} ms`) },
  critical: { format: (v) => `${v} %` },
  sheddable: { format: (v) => `${v} %` },
};

for (const [id, knob] of Object.entries(KNOBS)) {
  const input = $(`#${id}`);
  if (params.has(id)) input.value = params.get(id);
  knob.input = input;
  knob.output = $(`#${id}-out`);
}
// The two shares never sum past 100 %: the one moved wins (this listener
// runs before app.js's, which reads the knobs).
for (const [id, other] of [
  ["critical", "sheddable"],
  ["sheddable", "critical"],
]) {
  const balance = () => {
    const rest = 100 - Number(KNOBS[id].input.value);
    if (Number(KNOBS[other].input.value) > rest) KNOBS[other].input.value = String(rest);
  };
  KNOBS[id].input.addEventListener("input", balance);
  if (id === "critical") balance();
}
if (params.has("compare")) $("#compare").checked = params.get("compare") !== "0";

/** The limit algorithm selector: "fixed", "aimd", "gradient2" or "vegas". */
export const ALGORITHMS = ["fixed", "aimd", "gradient2", "vegas"];
const algorithmSelect = $("#algorithm");
if (ALGORITHMS.includes(params.get("algorithm"))) algorithmSelect.value = params.get("algorithm");
export const algorithm = () => algorithmSelect.value;

export const knob = (id) => Number(KNOBS[id].input.value);

/**
 * The lane's options: `algorithm` and `maxInFlight` (the fixed limit, or
 * the adaptive limit's initial value) and the rest of the Limiter's.
 */
export function limiterOptions() {
  return {
    algorithm: algorithm(),
    maxInFlight: knob("maxInFlight"),
    maxQueue: knob("maxQueue"),
    queueTimeoutMs: knob("queueTimeoutMs"),
    deadlineMs: knob("deadlineMs"),
  };
}

/** The criticality mix: `{ critical, default, sheddable }`, fractions summing to 1. */
export function mix() {
  const critical = knob("critical") / 100;
  const sheddable = Math.min(1 - critical, knob("sheddable") / 100);
  return { critical, default: Math.max(0, 1 - critical - sheddable), sheddable };
}

export function showKnobs() {
  $("#default-share").textContent = `${Math.round(mix().default * 100)} %`;
  for (const [id, k] of Object.entries(KNOBS)) k.output.textContent = k.format(knob(id));
  const adaptive = algorithm() !== "fixed";
  $("#maxInFlight-name").textContent = adaptive ? "initialLimit" : "maxInFlight";
  $("#algorithm-hint").textContent = adaptive
    ? `adaptive: { algorithm: "${algorithm()}", initialLimit, minLimit: 1, maxLimit: 64 }. The limit follows the origin's capacity.`
    : "A fixed maxInFlight: the limit stays where you set it.";
  const capacityRps = (knob("capacity") * 1000) / knob("latency");
  $("#capacity-hint").textContent = `It serves at most ≈ ${Math.round(capacityRps)} req/s (${knob("capacity")} slots × 1000 / ${knob("latency")} ms).`;
  const ratio = knob("offered") / capacityRps;
  const hint = $("#load-hint");
  hint.textContent =
    knob("offered") === 0
      ? "No load."
      : `${ratio.toFixed(ratio < 10 ? 1 : 0)}× what the origin can serve${ratio > 1 ? ": overload" : ""}.`;
  hint.classList.toggle("warn", ratio > 1);
}

