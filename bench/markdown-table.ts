/** A Markdown table; `numeric[i]` right-aligns column `i`. */
export function markdownTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  numeric: readonly boolean[] = [],
): string {
  const align = headers.map((_, column) => (numeric[column] ? '---:' : '---'));
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(align), ...rows.map(line)].join('\n');
}
