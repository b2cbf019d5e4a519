// The op runners on std::complex<float>, for the instruction set the build compiles this file for (TFL_ISA, see
// ops.h; one translation unit per scalar type: Eigen's templates compile in parallel).
#include "ops.h"

namespace tfl {
namespace TFL_ISA {
int run_c64(const Job& j) { return Runner<std::complex<float>>(j).run(); }
}  // namespace TFL_ISA
}  // namespace tfl
