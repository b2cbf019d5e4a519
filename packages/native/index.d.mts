/** The absolute path of @tenferro/native's shared C++ headers (`#include "tenferro/…"`). */
export declare const includeDir: string;
