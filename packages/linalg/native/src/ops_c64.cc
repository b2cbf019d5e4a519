// The op runners on std::complex<float> (one translation unit per scalar type: Eigen's templates compile in parallel).
#include "ops.h"

namespace tfl {
int run_c64(const Job& j) { return Runner<std::complex<float>>(j).run(); }
}  // namespace tfl
