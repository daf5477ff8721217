// Renders the tables and the goals of a saved run again (the plot:
// lib/plot.mjs):  node benches/e2e/lib/render.mjs results.json [out.md]
// A file with a `bench` (criticality.mjs, codel.mjs, tenants.mjs) is
// rendered by lib/class-reports.mjs, one of run.mjs by lib/report.mjs.
import { readFileSync, writeFileSync } from "node:fs";
import { renderBench } from "./class-reports.mjs";
import { goalsMarkdown, tableMarkdown } from "./report.mjs";

const [json, md] = process.argv.slice(2);
if (!json) {
  console.error("usage: node benches/e2e/lib/render.mjs results.json [out.md]");
  process.exit(2);
}
const data = JSON.parse(readFileSync(json, "utf8"));
const markdown = data.bench ? renderBench(data) : `${tableMarkdown(data.rows, data.meta)}\n${goalsMarkdown(data.rows, data.meta)}`;
if (md) writeFileSync(md, markdown);
else console.log(markdown);
