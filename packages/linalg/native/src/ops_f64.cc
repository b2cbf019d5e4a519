// The op runners on double (one translation unit per scalar type: Eigen's templates compile in parallel).
#include "ops.h"

namespace tfl {
int run_f64(const Job& j) { return Runner<double>(j).run(); }
}  // namespace tfl
