// The op runners on float (one translation unit per scalar type: Eigen's templates compile in parallel).
#include "ops.h"

namespace tfl {
int run_f32(const Job& j) { return Runner<float>(j).run(); }
}  // namespace tfl
