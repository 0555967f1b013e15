import type { ImportReport } from './importer.ts';

/** The report as the operator reads it: one line a table, then what was left behind and why. */
export function formatReport(report: ImportReport, source: string): string {
  const lines: string[] = [];
  const verb = report.dryRun ? 'would write' : 'written';
  lines.push(`${report.dryRun ? 'dry run: nothing written' : 'import'} from ${source} (${report.flavour})`);
  for (const t of report.tables) {
    if (t.notRead) {
      lines.push(`  ${t.table.padEnd(12)} not read: ${t.notRead}`);
      continue;
    }
    const skipped = Object.values(t.skipped).reduce((a, b) => a + b, 0);
    lines.push(
      `  ${t.table.padEnd(12)} source ${t.source}, ${verb} ${t.written}, already present ${t.present}, not carried ${skipped}`,
    );
    for (const [reason, n] of Object.entries(t.skipped)) lines.push(`      ${n} not carried: ${reason}`);
    if (t.absentColumns.length > 0)
      lines.push(`      absent in this source version (defaults used): ${t.absentColumns.join(', ')}`);
    for (const column of t.droppedColumns) lines.push(`      column not carried: ${column}`);
  }
  if (report.unknownOptions.length > 0)
    lines.push(`  options Turnpike does not know (not carried): ${report.unknownOptions.join(', ')}`);
  for (const message of report.invalidOptions) lines.push(`  option not carried: ${message}`);
  if (report.keptOptions.length > 0)
    lines.push(`  options Turnpike already sets (its values kept): ${report.keptOptions.join(', ')}`);
  for (const table of report.uncarriedTables) lines.push(`  table not carried: ${table}`);
  for (const note of report.notes) lines.push(`  note: ${note}`);
  return `${lines.join('\n')}\n`;
}
