#include "core/tensor/parallel.h"

namespace headscope {

int compute_threads() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

void set_compute_threads(int n) {
#ifdef _OPENMP
    omp_set_num_threads(std::max(n, 1));
#else
    (void)n;
#endif
}

}   // namespace headscope
