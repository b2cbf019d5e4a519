export { collectInfo, formatInfo, INFO_SCHEMA } from './commands/info.js';
export type { CollectInfoOptions, InfoReport } from './commands/info.js';
export { findInstalledProviders, KNOWN_PROVIDER_PACKAGES } from './installed-providers.js';
export type { InstalledPackage } from './installed-providers.js';
