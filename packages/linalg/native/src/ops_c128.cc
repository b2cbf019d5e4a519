// The op runners on std::complex<double> (one translation unit per scalar type: Eigen's templates compile in parallel).
#include "ops.h"

namespace tfl {
int run_c128(const Job& j) { return Runner<std::complex<double>>(j).run(); }
}  // namespace tfl
