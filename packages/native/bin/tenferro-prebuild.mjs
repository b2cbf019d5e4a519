#!/usr/bin/env node
// `tenferro-prebuild` (a native package's `prepack` and `build:prebuilds`, run in the package folder):
// the prebuilt binary its tarball carries, native/prebuilds/<platform>-<arch>/<@scope+name>.glibc.node,
// built by prebuildify from a staged copy of what native/binding.gyp needs (lib/prebuild.mjs, #40).
//
//   tenferro-prebuild [--force]            build it (skipped while nothing it is made of changed)
//   tenferro-prebuild --stage [DIR]        only stage the inputs (default native/build/prebuild) and list them
//   tenferro-prebuild --configure [DIR]    stage, then `node-gyp configure` there (seconds): every input
//                                          binding.gyp needs is staged, or this fails
// Environment: TENFERRO_SKIP_PREBUILD=1 skips the build (not --stage or --configure).
import { join, relative, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { configureStaged, prebuild, stagePrebuild } from '../lib/prebuild.mjs';

const packageDir = process.cwd();
const argv = process.argv.slice(2);
let name = packageDir;
try {
  name = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).name;
} catch {
  console.error(`tenferro-prebuild: run it in a package folder (no package.json in ${packageDir})`);
  process.exit(2);
}
const say = (line) => console.log(`${name}: prebuild: ${line}`);
const fail = (line) => {
  console.error(`${name}: prebuild: ${line}`);
  process.exit(1);
};
const dirAfter = (flag) => {
  const v = argv[argv.indexOf(flag) + 1];
  return v === undefined || v.startsWith('--') ? undefined : resolve(v);
};

try {
  if (argv.includes('--stage') || argv.includes('--configure')) {
    const flag = argv.includes('--configure') ? '--configure' : '--stage';
    const { workDir, inputs } = stagePrebuild({ packageDir, workDir: dirAfter(flag) });
    say(`staged ${inputs.entries.join(', ')}${inputs.external.length > 0 ? ` and ${inputs.external.map((e) => e.written).join(', ')}` : ''} in ${relative(packageDir, workDir) || workDir}`);
    if (flag === '--configure') {
      const r = configureStaged({ packageDir, workDir });
      if (!r.ok) fail(`node-gyp configure failed in the staged copy:\n${r.output.split('\n').filter((l) => l.trim() && !l.startsWith('gyp info')).slice(-20).join('\n')}`);
      say('node-gyp configure succeeded in the staged copy');
    }
    process.exit(0);
  }
  if (process.env.TENFERRO_SKIP_PREBUILD === '1') {
    say('skipped (TENFERRO_SKIP_PREBUILD=1)');
    process.exit(0);
  }
  if (process.platform !== 'linux') {
    say(`no prebuilt binary for ${process.platform}-${process.arch}: prebuilds are made on Linux (glibc) only`);
    process.exit(0);
  }
  const r = prebuild({ packageDir, force: argv.includes('--force'), say });
  if (r.skipped) say(`up to date (${relative(packageDir, r.file)})`);
  else say(`${relative(packageDir, r.file)} (${(r.bytes / 1024).toFixed(0)} KiB, ${r.seconds.toFixed(1)} s)`);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
