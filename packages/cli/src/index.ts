export { collectInfo, formatInfo, INFO_SCHEMA } from './commands/info.js';
export type { CollectInfoOptions, InfoReport, ProviderReport } from './commands/info.js';
export { findInstalledProviders } from './installed-providers.js';
export type { InstalledPackage } from './installed-providers.js';
