// @tenferro/native: what a native tenferro package (ours or a third party's) needs at install and
// build time — never at run time (#40). The bins `tenferro-install-native` (the install step) and
// `tenferro-prebuild` (prepack), `@tenferro/native/prebuild` (the staging and prebuild functions), and
// the shared C++ headers:
//
//   "include_dirs": ["<!(node -p \"require('@tenferro/native').includeDir\")"]   (binding.gyp)
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The absolute path of the shared C++ headers (`#include "tenferro/…"`). */
export const includeDir = join(dirname(fileURLToPath(import.meta.url)), 'include');
