// The op runners on std::complex<double>, for the instruction set the build compiles this file for (TFL_ISA, see
// ops.h; one translation unit per scalar type: Eigen's templates compile in parallel).
#include "ops.h"

// The complex<double> SVD, instantiated here once for this file and for ops_c64.cc's wide retry (#39).
template class Eigen::BDCSVD<Eigen::Matrix<std::complex<double>, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>>;
template class Eigen::JacobiSVD<Eigen::Matrix<std::complex<double>, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>>;

namespace tfl {
namespace TFL_ISA {
int run_c128(const Job& j) { return Runner<std::complex<double>>(j).run(); }
const char* compiler_c128() { return TFL_COMPILER; }
}  // namespace TFL_ISA
}  // namespace tfl
