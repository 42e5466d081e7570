// summarize.mjs DIR LABEL [REQUIREMENTS] — reads the checks.json files the
// MCP conformance suite wrote under DIR (one directory per scenario) and
// prints one summary line for the suite, then one line per failed check.
// Exits 1 when a check failed or when no scenario ran at all (a run that
// tested nothing is not a pass), 0 otherwise. With REQUIREMENTS (the suite's
// requirements/<revision>.yaml) the scenarios its server list scores are
// summarised first; the others it runs (extensions, pending scenarios) are
// reported on a line of their own, and fail the run as well when one of
// their checks fails: every scenario must pass, with no expected failures.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const [dir, label, requirements] = process.argv.slice(2);
if (!dir || !label) {
  console.error('usage: node summarize.mjs DIR LABEL [REQUIREMENTS]');
  process.exit(2);
}

// scored reads the server scenarios a requirements file lists: the items
// of its top-level "server:" list.
const scored = (file) => {
  const names = new Set();
  let inServer = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\S/.test(line)) inServer = line.startsWith('server:');
    const m = inServer && line.match(/^\s+-\s+([\w\/.-]+)\s*$/);
    if (m) names.add(m[1]);
  }
  if (names.size === 0) throw new Error(`${file} lists no server scenario`);
  return names;
};
const counted = requirements ? scored(requirements) : null;

// A scenario's directory is server-<scenario>-<ISO timestamp>.
const scenarioOf = (name) =>
  name.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');

const scenarios = [];
for (const entry of existsSync(dir) ? readdirSync(dir).sort() : []) {
  const file = join(dir, entry, 'checks.json');
  if (!existsSync(file)) continue;
  let checks;
  try {
    checks = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    checks = [{ id: 'checks.json', status: 'FAILURE', errorMessage: `unreadable: ${e.message}` }];
  }
  scenarios.push({ name: scenarioOf(entry), checks: Array.isArray(checks) ? checks : [] });
}
const failing = (s) => s.checks.some((c) => c.status === 'FAILURE');
const extra = counted ? scenarios.filter((s) => !counted.has(s.name)) : [];
if (counted) {
  scenarios.splice(0, scenarios.length, ...scenarios.filter((s) => counted.has(s.name)));
  const missing = [...counted].filter((n) => !scenarios.some((s) => s.name === n));
  for (const n of missing) scenarios.push({ name: n, checks: [{ id: 'ran', status: 'FAILURE', errorMessage: 'the scenario did not run' }] });
}

const count = (status) =>
  scenarios.reduce((n, s) => n + s.checks.filter((c) => c.status === status).length, 0);
const failed = scenarios.filter((s) => s.checks.some((c) => c.status === 'FAILURE'));
const total = scenarios.reduce((n, s) => n + s.checks.length, 0);

let line = `${label}: ${scenarios.length - failed.length}/${scenarios.length} scenarios pass, ` +
  `${count('SUCCESS')}/${total} checks succeed (${count('WARNING')} warnings, ${count('SKIPPED')} skipped)`;
if (failed.length > 0) line += `; FAILED: ${failed.map((s) => s.name).join(', ')}`;
if (scenarios.length === 0) line += '; NO SCENARIO RAN';
console.log(line);
if (extra.length > 0) {
  const bad = extra.filter(failing);
  console.log(`  not scored by this revision: ${extra.length - bad.length}/${extra.length} pass` +
    (bad.length > 0 ? ` (failing: ${bad.map((s) => s.name).join(', ')})` : ''));
}
const extraFailed = extra.filter(failing);
for (const s of [...failed, ...extraFailed]) {
  for (const c of s.checks.filter((c) => c.status === 'FAILURE')) {
    console.log(`  ${s.name} / ${c.id}: ${c.errorMessage ?? c.description ?? 'failed'}`);
  }
}
process.exit(failed.length > 0 || extraFailed.length > 0 || scenarios.length === 0 ? 1 : 0);
