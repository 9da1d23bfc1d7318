#!/usr/bin/env node
import { CliError, reportFailure } from './output.js';
import { buildProgram } from './program.js';

// One line on stderr for every failure, exit code 1 unless the error says otherwise (130 after
// Ctrl-C); process.exitCode lets stdout drain first.
buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    reportFailure(error);
    process.exitCode = error instanceof CliError ? error.exitCode : 1;
  });
