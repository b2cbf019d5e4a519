/**
 * Logical parallel mode of one entered operation (contract glossary "ParallelMode").
 * - `sequential`: nobody fans out;
 * - `outer`: the engine fans out over lanes, each lane gets a sequential context (providers never see it);
 * - `inner`: one provider kernel may fan out on the context's `workerPool()` within the budget.
 */
export type ParallelMode = 'sequential' | 'outer' | 'inner';

/** The modes a provider may receive. */
export type ProviderParallelMode = Exclude<ParallelMode, 'outer'>;
