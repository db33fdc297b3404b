#pragma once
// How core/ spreads one forward pass over the machine's cores. Eigen's own OpenMP GEMM
// was measured poor on two cores (docs/performance.md), so Eigen runs single-threaded
// (EIGEN_DONT_PARALLELIZE) and the work is cut here instead: a GEMM into blocks of
// output rows or columns, attention into heads, row-wise layers into row ranges. Each
// thread gets one contiguous range, so no two threads write the same memory.
//
// The thread count is OpenMP's (OMP_NUM_THREADS, else every core); the programs' one
// knob, --threads, sets it at their boundary. Built without OpenMP, everything runs on
// the calling thread, with the same results.

#include <Eigen/Core>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>

namespace headscope {

// Threads a parallel region uses at most (1 without OpenMP).
int compute_threads();
// Sets that for the calling thread and the threads it starts regions on (n >= 1).
void set_compute_threads(int n);

// Below this many floating-point operations per thread, waking another thread costs
// more than it saves (a region's start is a few microseconds).
inline constexpr double min_flops_per_thread = 2.0e5;

// Whether the calling thread is inside a parallel region (whose work must not allocate).
inline bool in_parallel_region() {
#ifdef _OPENMP
    return omp_in_parallel() != 0;
#else
    return false;
#endif
}

#ifdef _OPENMP
// Threads for a region over n items of `flops` work in all: as many as the work
// justifies, at most n and the thread count, and 1 when already inside a region.
inline int region_threads(Eigen::Index n, double flops) {
    if (omp_in_parallel()) return 1;
    const auto by_work = static_cast<Eigen::Index>(flops / min_flops_per_thread);
    return static_cast<int>(std::min<Eigen::Index>({n, by_work, omp_get_max_threads()}));
}
#endif

// Calls body(begin, end) on contiguous ranges that cover [0, n): one range per thread,
// as many threads as `flops` (the whole job's work) justifies; all on the calling
// thread when that is one, or when already inside a parallel region. `body` must not
// throw (allocate before, check after).
template <typename Body>
void parallel_ranges(Eigen::Index n, double flops, Body&& body) {
    if (n <= 0) return;
#ifdef _OPENMP
    const int threads = region_threads(n, flops);
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
        {
            const Eigen::Index count = omp_get_num_threads();
            const Eigen::Index t = omp_get_thread_num();
            const Eigen::Index begin = n * t / count;
            const Eigen::Index end = n * (t + 1) / count;
            if (begin < end) body(begin, end);
        }
        return;
    }
#endif
    (void)flops;
    body(Eigen::Index{0}, n);
}

// Calls body(i) for every i in [0, n), handing items to threads one at a time as they
// come free, rather than in fixed ranges: for many pieces of work where one core may be
// slower than the other (a shared machine), or pieces that take unequal time. Same
// thread count and the same "one thread when not worth it" rule as parallel_ranges.
template <typename Body>
void parallel_items(Eigen::Index n, double flops, Body&& body) {
    if (n <= 0) return;
#ifdef _OPENMP
    const int threads = region_threads(n, flops);
    if (threads > 1) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (Eigen::Index i = 0; i < n; ++i) body(i);
        return;
    }
#endif
    (void)flops;
    for (Eigen::Index i = 0; i < n; ++i) body(i);
}

// prepare(j) for every j in [0, m) (in equal shares), and once all are done, body(i)
// for every i in [0, n) (as parallel_items hands them out), in one parallel region: one
// start of the threads and one wait between the two, rather than two regions. The
// thread count comes from n and `flops`, as in parallel_items.
template <typename Prepare, typename Body>
void parallel_items_after(Eigen::Index m, Prepare&& prepare, Eigen::Index n, double flops, Body&& body) {
#ifdef _OPENMP
    const int threads = n > 0 ? region_threads(n, flops) : 1;
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
        {
#pragma omp for schedule(static)
            for (Eigen::Index j = 0; j < m; ++j) prepare(j);
#pragma omp for schedule(dynamic, 1)
            for (Eigen::Index i = 0; i < n; ++i) body(i);
        }
        return;
    }
#endif
    (void)flops;
    for (Eigen::Index j = 0; j < m; ++j) prepare(j);
    for (Eigen::Index i = 0; i < n; ++i) body(i);
}

}   // namespace headscope
