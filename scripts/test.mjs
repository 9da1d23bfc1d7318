#!/usr/bin/env node
// `npm test`: every test file, on both backends, the way CI runs them.
//
// The tests run as JavaScript, from a mirror of the checkout that esbuild writes first
// (scripts/test-build.mjs): through tsx, module loading cost a tenth of the CPU.
//
// A test process spends about a second of CPU starting (Fastify, the app's modules) before its
// first test; one per file was a fifth of the suite's CPU. So the main files run in bundles: a
// bundle is a generated file that imports a few test files, which `node --test` runs in one
// process, their suites one after the other. The files that take longest run alone and first, so
// that the run does not end waiting on one of them; a file that must see a fresh process does too.
// The fault tests (kill -9, a database that goes away) run after: two at a time, then those that
// judge the machine's pace alone.
//
//   npm test                      every file
//   npm test -- test/leads/*.ts   these files, each in its own process (node --test options too)
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { buildTests } from './test-build.mjs';

const root = resolve(import.meta.dirname, '..');
/** Test files bundled together, at most. */
const BUNDLE_FILES = 6;
/**
 * Processes at once, on two cores: the suite waits on PostgreSQL, browsers, servers and timers a
 * good part of its time (a bundle's CPU profile is 40-80 % idle); at 3 the main part left a quarter
 * of the machine idle.
 */
const CONCURRENCY = 4;
const TIMEOUT_MS = 300_000;
/** Alone, and first: the longest files (half a minute or more each) … */
const LONGEST = [
  'test/webhooks/webhook-processes.test.ts',
  'test/console/console.test.ts',
  'test/console/console-pipelines.test.ts',
  'test/console/console-imports.test.ts',
  'test/webhooks/webhooks.test.ts',
  'test/server/embedded-restart.test.ts',
  'test/console/console-duplicates.test.ts',
  'test/cli/cli.test.ts',
];
/** … and the files that must see a process of their own (which modules it loads, say). */
const OWN_PROCESS = ['test/mcp/mcp-loading.test.ts'];
/**
 * The fault tests that judge the machine's own pace (load shed at a measured delay, waits bounded
 * from measured times) run last and alone. The others (kill -9, an outage, a shutdown, fuzzing)
 * mostly wait on processes and judge only generous bounds: they run two at a time, longest first.
 */
const FAULTS_ALONE = ['test/faults/fair-share.test.ts', 'test/faults/overload.test.ts'];
const FAULTS_LONGEST = ['test/faults/database-outage.test.ts', 'test/faults/import-crash.test.ts'];
const FAULTS_TWO_AT_A_TIME = 2;

function testFiles(dir) {
  return readdirSync(join(root, dir), { recursive: true })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => join(dir, name))
    .sort();
}

/** The mirror of the checkout the tests run from, as JavaScript (scripts/test-build.mjs). */
const built = join(root, '.cache', 'test-build', String(process.pid));

/** `file` of the checkout (test/…/x.test.ts) as the mirror holds it; an option (`--test-name-pattern=…`) as it is. */
function inMirror(file) {
  if (file.startsWith('-')) return file;
  return relative(root, join(built, relative(root, resolve(root, file)).replace(/\.ts$/, '.js')));
}

function runTests(files, concurrency) {
  const args = ['--enable-source-maps', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${TIMEOUT_MS}`];
  const { status, signal } = spawnSync(process.execPath, [...args, ...files], { cwd: root, stdio: 'inherit' });
  return status ?? (signal ? 1 : 0);
}

/** Writes the bundles of `files` (each a module importing its files) into `dir`; their paths. */
function bundle(files, dir) {
  mkdirSync(dir, { recursive: true });
  const paths = [];
  for (let start = 0; start < files.length; start += BUNDLE_FILES) {
    const group = files.slice(start, start + BUNDLE_FILES);
    const path = join(dir, `${String(paths.length).padStart(2, '0')}.test.mjs`);
    writeFileSync(path, group.map((file) => `import ${JSON.stringify(join(root, file))};\n`).join(''));
    paths.push(relative(root, path));
  }
  return paths;
}

/** Removes what runs ended by Ctrl-C left in `dir`: a directory per run, named by its PID. */
function sweepStale(dir) {
  let names = [];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    try {
      process.kill(Number(name), 0);
    } catch (error) {
      if (error.code === 'ESRCH') rmSync(join(dir, name), { recursive: true, force: true });
    }
  }
}

const chosen = process.argv.slice(2);
for (const dir of ['test-build', 'test-bundles']) sweepStale(join(root, '.cache', dir));
await buildTests(root, built);
process.on('exit', () => rmSync(built, { recursive: true, force: true }));
if (chosen.length > 0) process.exit(runTests(chosen.map(inMirror), CONCURRENCY));

const alone = [...LONGEST, ...OWN_PROCESS];
const main = testFiles('test').filter((file) => !file.startsWith('test/faults/'));
const faults = testFiles('test/faults');
const missing = [
  ...alone.filter((file) => !main.includes(file)),
  ...[...FAULTS_ALONE, ...FAULTS_LONGEST].filter((file) => !faults.includes(file)),
];
if (missing.length > 0) throw new Error(`scripts/test.mjs names files that are gone: ${missing.join(', ')}`);
const bundlesDir = join(root, '.cache', 'test-bundles', String(process.pid));
let status;
try {
  const bundles = bundle(main.filter((file) => !alone.includes(file)).map(inMirror), bundlesDir);
  status = runTests([...alone.map(inMirror), ...bundles], CONCURRENCY);
} finally {
  rmSync(bundlesDir, { recursive: true, force: true });
}
if (status === 0) {
  const paired = [...FAULTS_LONGEST, ...faults.filter((file) => ![...FAULTS_LONGEST, ...FAULTS_ALONE].includes(file))];
  status = runTests(paired.map(inMirror), FAULTS_TWO_AT_A_TIME);
}
if (status === 0) status = runTests(FAULTS_ALONE.map(inMirror), 1);
process.exit(status);
