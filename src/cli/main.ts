#!/usr/bin/env node
import { reportFailure } from './output.js';
import { buildProgram } from './program.js';

// Exit code 1 and one line on stderr for every failure; process.exitCode lets stdout drain first.
buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    reportFailure(error);
    process.exitCode = 1;
  });
