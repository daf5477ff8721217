// Markdown for benches whose goals are checked row by row: a table with one
// column per figure and one per goal (each marked met or missed), a summary
// per configuration (the goal met in every row), and the configurations the
// build could not run. Used through lib/class-reports.mjs.

/** "met", "missed", or "–" where a goal does not apply to the row (or the row lacks the figure). */
export function mark(ok) {
  if (ok === undefined) return "–";
  return ok ? "✓ met" : "✗ missed";
}

/**
 * One row per element of `rows`: `columns` ([head, cell(row)]) and then one
 * column per goal ([head, test(row) → true | false | undefined]).
 */
export function goalTable(rows, columns, goals) {
  const heads = [...columns.map(([head]) => head), ...goals.map(([head]) => head)];
  const out = [`| ${heads.join(" | ")} |`, `|${heads.map(() => "---").join("|")}|`];
  for (const row of rows) {
    const cells = [...columns.map(([, cell]) => cell(row)), ...goals.map(([, test]) => mark(test(row)))];
    out.push(`| ${cells.join(" | ")} |`);
  }
  return out.join("\n");
}

/** Per configuration (`row.config`) and goal: met in every row it applies to (rows where it does not apply are left out). */
export function goalSummary(rows, goals) {
  const configs = [...new Set(rows.map((r) => r.config))];
  const out = [`| goal, in every run | ${configs.join(" | ")} |`, `|---|${configs.map(() => "---").join("|")}|`];
  for (const [head, test] of goals) {
    const cells = configs.map((config) => {
      const results = rows.filter((r) => r.config === config).map(test).filter((ok) => ok !== undefined);
      return mark(results.length === 0 ? undefined : results.every(Boolean));
    });
    out.push(`| ${head} | ${cells.join(" | ")} |`);
  }
  return out.join("\n");
}

/** The configurations left out, each with the build's reason (or an empty string). */
export function skippedNote(skipped = []) {
  if (skipped.length === 0) return "";
  const lines = skipped.map((s) => `- **${s.config}** skipped: this build rejects its configuration: ${s.message}`);
  return `Not run (the gateway keys they need are not in this build yet):\n\n${lines.join("\n")}\n`;
}
