// c128's SVD retry in complex<long double> (ops.h, Runner::svd), in its own translation unit so that
// it compiles beside ops_c128.cc instead of after it on the same CPU (#39).
#include "ops.h"

namespace tfl {
namespace TFL_ISA {
void svd_c128_wide(Runner<std::complex<double>>& r, int64_t b, const Eigen::Matrix<std::complex<double>, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>& a) {
  r.template svd_in<std::complex<long double>>(b, a, false);
}
}  // namespace TFL_ISA
}  // namespace tfl
