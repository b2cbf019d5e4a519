// The op runners on double, for the instruction set the build compiles this file for (TFL_ISA, see
// ops.h; one translation unit per scalar type: Eigen's templates compile in parallel).
#include "ops.h"

namespace tfl {
namespace TFL_ISA {
int run_f64(const Job& j) { return Runner<double>(j).run(); }
const char* compiler_f64() { return TFL_COMPILER; }
}  // namespace TFL_ISA
}  // namespace tfl
