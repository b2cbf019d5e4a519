// The op runners on float, for the instruction set the build compiles this file for (TFL_ISA, see
// ops.h; one translation unit per scalar type: Eigen's templates compile in parallel).
#include "ops.h"

namespace tfl {
namespace TFL_ISA {
int run_f32(const Job& j) { return Runner<float>(j).run(); }
const char* compiler_f32() { return TFL_COMPILER; }
}  // namespace TFL_ISA
}  // namespace tfl
