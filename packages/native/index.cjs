// @tenferro/native for require() — binding.gyp's `<!(node -p "require('@tenferro/native').includeDir")`
// (index.mjs says what the package holds).
'use strict';
const { join } = require('node:path');

/** The absolute path of the shared C++ headers (`#include "tenferro/…"`). */
exports.includeDir = join(__dirname, 'include');
