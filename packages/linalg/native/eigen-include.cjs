// Prints the directory holding Eigen 3.4's headers for binding.gyp (EIGEN3_INCLUDE_DIR, else the
// Debian/Ubuntu/Fedora location). Eigen is a build-time dependency only; without it the build stops here with the fix.
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const candidates = [process.env.EIGEN3_INCLUDE_DIR, '/usr/include/eigen3', '/usr/local/include/eigen3'].filter(Boolean);
const found = candidates.find((d) => existsSync(join(d, 'Eigen', 'Dense')));
if (found === undefined) {
  process.stderr.write(
    `@tenferro/linalg: Eigen 3.4's headers were not found (looked in ${candidates.join(', ')}). ` +
      'Install them (apt-get install libeigen3-dev, dnf install eigen3-devel, apk add eigen-dev) or set EIGEN3_INCLUDE_DIR, then npm rebuild @tenferro/linalg.\n',
  );
  process.exit(1);
}
process.stdout.write(found);
