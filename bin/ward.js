#!/usr/bin/env node
// `npx ward` entry: the CLI is TypeScript run by Node's type stripping (Node 24, pinned in
// devDependencies), so this file only hands over to it.
import '../src/cli/ward.ts';
