// The op runners on std::complex<float>, for the instruction set the build compiles this file for (TFL_ISA, see
// ops.h; one translation unit per scalar type: Eigen's templates compile in parallel).
#include "ops.h"

// The complex<double> JacobiSVD that c64's wide retry factors in (ops.h, svd_in) is compiled once,
// in ops_c128.cc, where c128's own SVD instantiates it: this file only refers to it (#39: a third of
// this translation unit's build time).
extern template class Eigen::JacobiSVD<Eigen::Matrix<std::complex<double>, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>>;

namespace tfl {
namespace TFL_ISA {
int run_c64(const Job& j) { return Runner<std::complex<float>>(j).run(); }
const char* compiler_c64() { return TFL_COMPILER; }
}  // namespace TFL_ISA
}  // namespace tfl
