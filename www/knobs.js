// The simulation's knobs: their inputs (initial values from the URL, see
// app.js), their printed values, and the Limiter options they make.

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
};

for (const [id, knob] of Object.entries(KNOBS)) {
  const input = $(`#${id}`);
  if (params.has(id)) input.value = params.get(id);
  knob.input = input;
  knob.output = $(`#${id}-out`);
}
if (params.has("compare")) $("#compare").checked = params.get("compare") !== "0";

export const knob = (id) => Number(KNOBS[id].input.value);

export function limiterOptions() {
  return {
    maxInFlight: knob("maxInFlight"),
    maxQueue: knob("maxQueue"),
    queueTimeoutMs: knob("queueTimeoutMs"),
    deadlineMs: knob("deadlineMs"),
  };
}

export function showKnobs() {
  for (const [id, k] of Object.entries(KNOBS)) k.output.textContent = k.format(knob(id));
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

