#pragma once
// Comparing all heads with each other on one input: the pairwise Jensen-Shannon
// divergence of their maps (per query row, in bits, averaged over rows either head
// attends from, as compare_heads does), heads ordered by average-linkage hierarchical
// clustering, and a 2-D map of heads by classical MDS on the divergence matrix, as
// Clark et al. 2019 ("What does BERT look at?") drew BERT's heads.

#include "core/analysis/head_maps.h"
#include "core/base/load_control.h"
#include "core/models/model.h"
#include "core/tensor/matrix.h"

#include <utility>
#include <vector>

namespace headscope {

struct HeadSimilarity {
    std::vector<std::pair<int, int>> heads;   // [N] (layer, head) of each row, layer-major
    Matrix divergence;                        // [N, N] mean JS divergence in bits (0..1), symmetric, 0 diagonal
    std::vector<int> order;                   // [N] indices into heads: the dendrogram's leaves, left to right
    Matrix mds;                               // [N, 2] classical MDS coordinates (signs as classical_mds fixes them)
};

// Mean JS divergence matrix of `maps` (each [T, T], same shape), symmetric. Reports
// progress after each row of pairs and throws LoadCancelled when asked to stop through
// `control`. 144 heads at T = 197 (10296 pairs), one thread: ~0.7 s (-march=native),
// ~2.3 s (x86-64 baseline).
Matrix js_divergence_matrix(const std::vector<const Matrix*>& maps, const LoadControl& control = {});

// Leaf order of average-linkage (UPGMA) clustering of a symmetric distance matrix. At
// each step the closest pair of clusters merges (ties: the pair with the smaller indices
// first); a merged cluster lists the one holding the lower original index first. The
// matrix is read as (D + D^T) / 2.
std::vector<int> average_linkage_order(const Matrix& distances);

// Classical (Torgerson) MDS: B = -1/2 J D^2 J, coordinates = top `dims` eigenvectors of B
// scaled by sqrt(eigenvalue) (0 where the eigenvalue is not positive), each axis's sign
// chosen so its largest coordinate (by magnitude) is positive. [N, dims].
Matrix classical_mds(const Matrix& distances, int dims = 2);

// All the above on a run's heads but those `left_out` switches off (unsized: every head).
// Reports progress and stops (LoadCancelled) through `control`. Every pair needs both
// maps, so a streamed run's maps are all computed first (each once, N map computations)
// and held together: refused with the memory they need when that does not fit.
HeadSimilarity head_similarity(const HeadMaps& maps, const HeadMask& left_out = {}, const LoadControl& control = {});
inline HeadSimilarity head_similarity(const ModelTrace& trace, const HeadMask& left_out = {},
                                      const LoadControl& control = {}) {
    return head_similarity(HeadMaps(trace), left_out, control);
}

}   // namespace headscope
