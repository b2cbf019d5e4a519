// The no-op task both sides of the execution benchmark run (tenferro kernel and piscina task).
export function noop() {}
